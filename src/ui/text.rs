//! Times and durations as players read them.

use crate::format::Timestamp;
use chrono::TimeZone;
use std::time::Duration;

/// The local date and time of `time` in `zone`, e.g. "2026-11-21 14:03".
pub(crate) fn format_local_time<Tz: TimeZone>(time: Timestamp, zone: &Tz) -> String
where
    Tz::Offset: std::fmt::Display,
{
    match zone.timestamp_millis_opt(time.unix_millis()).single() {
        Some(local) => local.format("%Y-%m-%d %H:%M").to_string(),
        None => "unknown date".to_owned(),
    }
}

/// How long ago `then` was, seen from `now`: "just now", "3 min ago", "2 h ago", "yesterday",
/// "5 days ago". A time in the future (a clock that moved back) reads "just now".
pub(crate) fn relative_time(now: Timestamp, then: Timestamp) -> String {
    let seconds = (now.unix_millis() - then.unix_millis()).max(0) / 1000;
    let minutes = seconds / 60;
    let hours = minutes / 60;
    let days = hours / 24;
    match () {
        _ if seconds < 60 => "just now".to_owned(),
        _ if minutes < 60 => format!("{minutes} min ago"),
        _ if hours < 24 => format!("{hours} h ago"),
        _ if days == 1 => "yesterday".to_owned(),
        _ if days < 60 => format!("{days} days ago"),
        _ => format!("{} months ago", days / 30),
    }
}

/// Play time as the save menu shows it: "42 s", "12 min", "1 h 05 min".
///
/// ```
/// use bevy_keepsake::ui::format_playtime;
/// use std::time::Duration;
///
/// assert_eq!(format_playtime(Duration::from_secs(3900)), "1 h 05 min");
/// ```
pub fn format_playtime(playtime: Duration) -> String {
    let seconds = playtime.as_secs();
    let (hours, minutes) = (seconds / 3600, seconds / 60 % 60);
    match () {
        _ if seconds < 60 => format!("{seconds} s"),
        _ if hours == 0 => format!("{minutes} min"),
        _ => format!("{hours} h {minutes:02} min"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_795_000_000_000;

    fn ago(seconds: i64) -> String {
        relative_time(
            Timestamp::from_unix_millis(NOW),
            Timestamp::from_unix_millis(NOW - seconds * 1000),
        )
    }

    #[test]
    fn relative_times_read_naturally_at_every_boundary() {
        assert_eq!(ago(0), "just now");
        assert_eq!(ago(59), "just now");
        assert_eq!(ago(60), "1 min ago");
        assert_eq!(ago(3 * 60 + 59), "3 min ago");
        assert_eq!(ago(3599), "59 min ago");
        assert_eq!(ago(3600), "1 h ago");
        assert_eq!(ago(23 * 3600 + 3599), "23 h ago");
        assert_eq!(ago(24 * 3600), "yesterday");
        assert_eq!(ago(2 * 24 * 3600), "2 days ago");
        assert_eq!(ago(90 * 24 * 3600), "3 months ago");
        assert_eq!(ago(-500), "just now", "a save from the future");
    }

    #[test]
    fn local_time_follows_the_zone() {
        let time = Timestamp::from_unix_millis(NOW);
        let utc = chrono::Utc;
        let tokyo = chrono::FixedOffset::east_opt(9 * 3600).unwrap();
        assert_eq!(format_local_time(time, &utc), "2026-11-18 11:06");
        assert_eq!(format_local_time(time, &tokyo), "2026-11-18 20:06");
    }

    #[test]
    fn playtime_is_short_and_exact() {
        assert_eq!(format_playtime(Duration::from_secs(42)), "42 s");
        assert_eq!(format_playtime(Duration::from_secs(12 * 60 + 59)), "12 min");
        assert_eq!(
            format_playtime(Duration::from_secs(3600 + 5 * 60)),
            "1 h 05 min"
        );
        assert_eq!(
            format_playtime(Duration::from_secs(100 * 3600)),
            "100 h 00 min"
        );
    }
}
