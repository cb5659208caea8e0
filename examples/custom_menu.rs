//! A save menu of your own, in a window: your UI over the plugin's data and requests, instead
//! of the bundled `SaveMenuPlugins` (drawn with egui here; any UI works the same way).
//!
//! - `SaveSlots` lists every slot: empty, saved (its metadata: title, play time, …) or damaged
//!   (with the backup a load falls back to). The plugin refreshes it in the background after
//!   every save, load and delete; the menu never touches files.
//! - `KeepsakeStatus` says which slots a job holds, so their buttons wait.
//! - `commands.request(SlotAction::Save, slot)` (or `Load`, `Delete`) asks; `SaveCompleted`,
//!   `LoadFailed` and the other results say what happened. `SaveTitle` names the next save.
//!
//! This menu saves over a save and deletes without asking; the bundled one asks first.
//!
//! Arrows move the square, Space picks up a coin, Esc shows or hides the menu, F5 / F9
//! quicksave and quickload. Run: `cargo run --example custom_menu` (saves go to the platform's
//! data folder, under `keepsake-custom-menu`).
use bevy::prelude::*;
use bevy_egui::{EguiContexts, EguiPlugin, EguiPrimaryContextPass, egui};
use bevy_keepsake::plugin::{DeleteCompleted, DeleteFailed, KeepsakeStatus, SlotAction};
use bevy_keepsake::prelude::*;
use bevy_keepsake::store::SlotStatus;
use bevy_keepsake::ui::format_playtime;

#[derive(Component, Reflect, Default)]
#[reflect(Component)]
struct Player;

#[derive(Resource, Reflect, Default)]
#[reflect(Resource)]
struct Coins(u32);

/// The menu's own state: shown or not, and the last result the plugin reported.
#[derive(Resource)]
struct Menu {
    open: bool,
    last: String,
}

const SLOTS: [SlotId; 4] = [
    SlotId::Quick,
    SlotId::Manual(0),
    SlotId::Manual(1),
    SlotId::Manual(2),
];

fn main() {
    App::new()
        .add_plugins((DefaultPlugins, EguiPlugin::default()))
        .add_plugins(KeepsakePlugins::new("keepsake-custom-menu"))
        .register_saveable_bevy_types() // Transform, Sprite, …
        .register_saveable::<Player>()
        .register_saveable::<Coins>()
        .init_resource::<Coins>()
        .insert_resource(Menu {
            open: true,
            last: "Esc hides this menu".into(),
        })
        .add_systems(Startup, start)
        .add_systems(Update, play)
        .add_observer(show::<SaveCompleted>(|e| format!("Saved to {}", e.slot)))
        .add_observer(show::<SaveFailed>(|e| format!("Not saved: {}", e.error)))
        .add_observer(show::<LoadCompleted>(|e| format!("Loaded {}", e.slot)))
        .add_observer(show::<LoadFailed>(|e| format!("Not loaded: {}", e.error)))
        .add_observer(show::<DeleteCompleted>(|e| format!("Deleted {}", e.slot)))
        .add_observer(show::<DeleteFailed>(|e| {
            format!("Not deleted: {}", e.error)
        }))
        .add_systems(EguiPrimaryContextPass, menu)
        .run();
}

fn start(mut commands: Commands) {
    commands.spawn(Camera2d);
    let look = Sprite::from_color(Color::srgb(0.9, 0.6, 0.2), Vec2::splat(40.0));
    commands.spawn((Saveable, Player, look, Transform::default()));
}

fn play(
    keys: Res<ButtonInput<KeyCode>>,
    time: Res<Time>,
    mut player: Single<&mut Transform, With<Player>>,
    mut coins: ResMut<Coins>,
    mut title: ResMut<SaveTitle>,
    mut menu: ResMut<Menu>,
) {
    let axis = |less, more| keys.pressed(more) as i8 as f32 - keys.pressed(less) as i8 as f32;
    let x = axis(KeyCode::ArrowLeft, KeyCode::ArrowRight);
    let y = axis(KeyCode::ArrowDown, KeyCode::ArrowUp);
    player.translation += Vec3::new(x, y, 0.0) * 300.0 * time.delta_secs();
    coins.0 += keys.just_pressed(KeyCode::Space) as u32;
    if coins.is_changed() {
        title.0 = format!("{} coins", coins.0); // stored with the next save, shown in menus
    }
    menu.open ^= keys.just_pressed(KeyCode::Escape);
}

/// An observer putting what the plugin reports as `E` on the menu's bottom line.
fn show<E: Event>(text: fn(&E) -> String) -> impl Fn(On<E>, ResMut<Menu>) {
    move |reported: On<E>, mut menu: ResMut<Menu>| menu.last = text(reported.event())
}

fn menu(
    mut contexts: EguiContexts,
    menu: Res<Menu>,
    coins: Res<Coins>,
    slots: Res<SaveSlots>,
    status: Res<KeepsakeStatus>,
    mut commands: Commands,
) -> Result {
    if !menu.open {
        return Ok(());
    }
    let window = egui::Window::new("Saves").anchor(egui::Align2::RIGHT_TOP, [-16.0, 16.0]);
    window.resizable(false).show(contexts.ctx_mut()?, |ui| {
        ui.label(format!("{} coins", coins.0));
        for slot in SLOTS {
            ui.separator();
            let (entry, idle) = (slots.get(slot), !status.is_busy(slot));
            // The newest save, or the backup a load falls back to when the newest is damaged.
            let shown = entry.and_then(|entry| entry.shown_save());
            let damaged = entry.is_some_and(|e| matches!(e.status, SlotStatus::Damaged { .. }));
            let text = match (shown, damaged) {
                (Some(save), damaged) => {
                    let backup = if damaged { "damaged; its backup: " } else { "" };
                    let played = format_playtime(save.meta.playtime);
                    format!("{backup}{}, played {played}", save.meta.title)
                }
                (None, true) => "damaged, no backup".to_owned(),
                (None, false) => "empty".to_owned(),
            };
            ui.label(egui::RichText::new(format!("{slot}: {text}")).strong());
            ui.horizontal(|ui| {
                let held = shown.is_some() || damaged;
                let enabled = [idle, idle && shown.is_some(), idle && held];
                for (action, enabled) in SlotAction::ALL.into_iter().zip(enabled) {
                    if ui
                        .add_enabled(enabled, egui::Button::new(action.label()))
                        .clicked()
                    {
                        commands.request(action, slot);
                    }
                }
            });
        }
        ui.separator();
        ui.label(if status.is_idle() {
            menu.last.as_str()
        } else {
            "Working…"
        });
    });
    Ok(())
}
