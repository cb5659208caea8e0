//! What the layouts in every save cost (blob layout version 2: each column carries its type's
//! layout once), on each benchmark world:
//!
//! - size: the layouts' bytes against the blob's, printed as `layouts size, ...` lines;
//! - load: `decode` of a blob with layouts (today's layouts equal the stored ones, so each
//!   column is compared once and read by the fast plan) against the same blob without layouts
//!   (version 1, read as before layouts): `layouts/<world>_decode` and `..._decode_v1`;
//! - a load whose layouts changed: a world of one reflection-only component saved with one
//!   layout and loaded with another (fields reordered, one widened, one added with a default),
//!   read through the resolved plan, against the same load with the layout unchanged:
//!   `layouts/heroes_decode_resolved` and `..._decode_same`.
//!
//! Loads are also timed in pairs, back to back (`layouts paired, ...` lines: the median ratio
//! and its quartiles), which this shared machine's noise moves far less than separate runs.
//!
//! The capture writes each column's layout from the capture cache (built once per type), so a
//! save's extra work is copying those bytes; the sizes show how many.

#[path = "../tests/it/common/blob_v1.rs"]
#[allow(dead_code, reason = "the tests' helper also rewrites save files")]
mod blob_v1;
#[path = "common/env.rs"]
mod env;
#[path = "../tests/it/common/game_world.rs"]
mod game_world;
#[path = "../tests/it/common/real_world.rs"]
mod real_world;
// The many-small world is the shapes family's (one builder for every bench).
#[path = "common/shapes.rs"]
mod shapes;

use bevy::prelude::*;
use bevy_keepsake::snapshot::{self, LoadMode, SaveRegistry, SaveableAppExt, Snapshot, state_hash};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Entity counts (see `common/env.rs`): 1k in a quick run, else 1k, 10k and 100k.
fn counts() -> Vec<u32> {
    env::counts(&[1_000], &[1_000, 10_000, 100_000])
}

/// One benchmark world: its name and how to build it.
type Shape = (&'static str, fn() -> App, fn(&mut World, u32));

const SHAPES: [Shape; 5] = [
    ("game-serde", game_world::app, game_world::populate),
    (
        "game-reflect",
        game_world::reflect_app,
        game_world::populate,
    ),
    ("real-game", real_world::app, real_world::populate),
    (
        "real-game-serde",
        real_world::serde_app,
        real_world::populate,
    ),
    (
        "many-small",
        shapes::many_small::app,
        shapes::many_small::populate,
    ),
];

/// The layouts' share of a blob: the bytes each column's layout takes (its length and bytes).
fn layout_bytes(blob: &[u8]) -> usize {
    let table = snapshot::inspect(blob).unwrap();
    let layouts = table
        .columns
        .iter()
        .filter_map(|column| column.layout.as_ref());
    layouts
        .map(|layout| {
            let len = layout.bytes().len();
            len + varint_len(len)
        })
        .sum()
}

fn varint_len(mut value: usize) -> usize {
    let mut len = 1;
    while value >= 0x80 {
        value >>= 7;
        len += 1;
    }
    len
}

/// How long `run` takes, its result dropped outside the timing.
fn timed<T>(run: impl FnOnce() -> T) -> Duration {
    let start = Instant::now();
    let result = run();
    let elapsed = start.elapsed();
    drop(black_box(result));
    elapsed
}

/// The ratio of two loads timed back to back, pair after pair, each pair in the other order
/// than the one before, so that neither a slow spell of this shared machine (which moves
/// criterion's separate runs by ±20 %) nor going first favours a side: prints the median ratio
/// and its quartiles as a `layouts paired, ...` line.
fn paired(
    label: &str,
    count: u32,
    mut a: impl FnMut() -> Duration,
    mut b: impl FnMut() -> Duration,
) {
    let pairs = if count >= 100_000 { 16 } else { 40 };
    // One pair to warm both up, not counted.
    a();
    b();
    let mut ratios: Vec<f64> = (0..pairs)
        .map(|n| {
            let (a, b) = if n % 2 == 0 {
                (a(), b())
            } else {
                let b = b();
                (a(), b)
            };
            a.as_secs_f64() / b.as_secs_f64()
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    let at = |q: usize| ratios[(ratios.len() - 1) * q / 4];
    println!(
        "layouts paired, {label}: ratio median {:.3} (quartiles {:.3} to {:.3}) over {pairs} pairs",
        at(2),
        at(1),
        at(3)
    );
}

fn decode(app: &App, blob: &[u8]) -> snapshot::DecodedSnapshot {
    let world = app.world();
    let types = world.resource::<AppTypeRegistry>().read();
    let registry = world.resource::<SaveRegistry>();
    snapshot::decode(blob, state_hash(blob), registry, &types).unwrap()
}

fn worlds(c: &mut Criterion) {
    let mut group = c.benchmark_group("layouts");
    group.sample_size(10);
    for count in counts() {
        for (name, app_of, populate) in SHAPES {
            let mut app = app_of();
            populate(app.world_mut(), count);
            let Snapshot { blob, .. } = snapshot::capture(app.world()).unwrap();
            let v1 = blob_v1::without_layouts(&blob);
            let layouts = layout_bytes(&blob);
            println!(
                "layouts size, {name}, {count} entities: blob {} bytes, layouts {layouts} bytes ({:.2} %)",
                blob.len(),
                100.0 * layouts as f64 / blob.len() as f64
            );
            paired(
                &format!("{name}, {count} entities"),
                count,
                || timed(|| decode(&app, &blob)),
                || timed(|| decode(&app, &v1)),
            );
            group.bench_function(BenchmarkId::new(format!("{name}_decode"), count), |b| {
                b.iter(|| decode(&app, black_box(&blob)))
            });
            group.bench_function(BenchmarkId::new(format!("{name}_decode_v1"), count), |b| {
                b.iter(|| decode(&app, black_box(&v1)))
            });
        }
    }
    group.finish();
}

/// A hero as the game's first version saved it.
mod saved {
    use bevy::prelude::*;

    #[derive(Component, Reflect, Clone, Debug, PartialEq)]
    #[reflect(Component)]
    #[type_path = "bench"]
    #[type_name = "Hero"]
    pub struct Hero {
        pub hp: u32,
        pub name: String,
        pub speed: f32,
        pub level: u16,
        pub class: Class,
    }

    #[derive(Reflect, Clone, Debug, PartialEq)]
    #[type_path = "bench"]
    #[type_name = "Class"]
    pub enum Class {
        Rogue,
        Mage { mana: f32, spells: Vec<String> },
    }
}

/// The hero today: fields in another order, `level` widened, `xp` added with a default.
mod today {
    use bevy::prelude::*;

    #[derive(Component, Reflect, Clone, Debug, PartialEq)]
    #[reflect(Component)]
    #[type_path = "bench"]
    #[type_name = "Hero"]
    pub struct Hero {
        pub class: Class,
        pub level: u32,
        pub name: String,
        pub hp: u32,
        pub speed: f32,
        #[reflect(default)]
        pub xp: u64,
    }

    #[derive(Reflect, Clone, Debug, PartialEq)]
    #[type_path = "bench"]
    #[type_name = "Class"]
    pub enum Class {
        Mage { spells: Vec<String>, mana: f32 },
        Rogue,
    }
}

fn heroes(count: u32) -> App {
    let mut app = App::new();
    app.register_saveable::<saved::Hero>();
    let world = app.world_mut();
    for n in 0..count {
        let class = match n % 3 {
            0 => saved::Class::Rogue,
            _ => saved::Class::Mage {
                mana: n as f32 * 0.5,
                spells: vec!["spark".into(), format!("ward-{}", n % 7)],
            },
        };
        world.spawn((
            snapshot::Saveable,
            saved::Hero {
                hp: 100 + n % 50,
                name: format!("hero-{n}"),
                speed: 3.5,
                level: (n % 60) as u16,
                class,
            },
        ));
    }
    app
}

/// The resolved load reads every hero right: checked once, before timing.
fn check_resolved(blob: &[u8], count: u32) {
    let mut app = App::new();
    app.register_saveable::<today::Hero>();
    let decoded = decode(&app, blob);
    assert!(decoded.dropped_fields().is_empty());
    snapshot::apply(app.world_mut(), decoded, LoadMode::Respawn);
    let world = app.world_mut();
    assert_eq!(
        world.query::<&today::Hero>().iter(world).count(),
        count as usize
    );
    let seven = world
        .query::<&today::Hero>()
        .iter(world)
        .find(|hero| hero.name == "hero-7")
        .cloned();
    let expected = today::Hero {
        class: today::Class::Mage {
            spells: vec!["spark".into(), "ward-0".into()],
            mana: 3.5,
        },
        level: 7,
        name: "hero-7".into(),
        hp: 107,
        speed: 3.5,
        xp: 0,
    };
    assert_eq!(seven, Some(expected));
}

fn resolved(c: &mut Criterion) {
    let mut group = c.benchmark_group("layouts");
    group.sample_size(10);
    for count in counts() {
        let saved_app = heroes(count);
        let Snapshot { blob, .. } = snapshot::capture(saved_app.world()).unwrap();
        let mut today_app = App::new();
        today_app.register_saveable::<today::Hero>();
        check_resolved(&blob, count);
        paired(
            &format!("heroes, {count} entities"),
            count,
            || timed(|| decode(&today_app, &blob)),
            || timed(|| decode(&saved_app, &blob)),
        );
        group.bench_function(BenchmarkId::new("heroes_decode_same", count), |b| {
            b.iter(|| decode(&saved_app, black_box(&blob)))
        });
        group.bench_function(BenchmarkId::new("heroes_decode_resolved", count), |b| {
            b.iter(|| decode(&today_app, black_box(&blob)))
        });
    }
    group.finish();
}

criterion_group!(benches, worlds, resolved);
criterion_main!(benches);
