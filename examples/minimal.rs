//! The smallest use of bevy_keepsake: headless; register, save, change, load, print.
use bevy::prelude::*;
use bevy_keepsake::prelude::*;
use std::time::Duration;

#[derive(Component, Reflect, Debug)]
#[reflect(Component)]
struct Health(u32);

fn main() -> AppExit {
    let root = std::env::temp_dir().join("keepsake-minimal-example");
    App::new()
        .add_plugins(MinimalPlugins)
        .add_plugins(
            KeepsakePlugin::new("minimal")
                .save_root(root)
                .autosave_every(Duration::ZERO),
        )
        .register_saveable::<Health>()
        .add_systems(Startup, |mut commands: Commands| {
            commands.spawn((Saveable, Health(100)));
            commands.save(SlotId::Manual(0));
        })
        .add_observer(
            |saved: On<SaveCompleted>, mut query: Query<&mut Health>, mut commands: Commands| {
                println!(
                    "saved {} entity to {}",
                    saved.entities,
                    saved.path.display()
                );
                query.iter_mut().for_each(|mut health| health.0 = 1); // lose the health…
                commands.load(SlotId::Manual(0)); // …and load it back
            },
        )
        .add_observer(
            |_: On<LoadCompleted>, query: Query<&Health>, mut exit: MessageWriter<AppExit>| {
                query
                    .iter()
                    .for_each(|health| println!("loaded {health:?}"));
                exit.write(AppExit::Success);
            },
        )
        .add_observer(|failed: On<SaveFailed>, mut exit: MessageWriter<AppExit>| {
            eprintln!("save failed: {}", failed.error);
            exit.write(AppExit::error());
        })
        .run()
}
