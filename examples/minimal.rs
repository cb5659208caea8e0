//! The smallest use of bevy_keepsake: headless; register, save, change, load, print.
use bevy::prelude::*;
use bevy_keepsake::prelude::*;

#[derive(Component, Reflect, Debug)]
#[reflect(Component)]
struct Health(u32);

fn main() -> AppExit {
    let root = std::env::temp_dir().join("keepsake-minimal-example");
    App::new()
        .add_plugins((
            MinimalPlugins,
            KeepsakePlugins::new("minimal").save_root(root),
        ))
        .register_saveable::<Health>()
        .add_systems(Startup, |mut commands: Commands| {
            commands.spawn((Saveable, Health(100)));
            commands.save(SlotId::Manual(0));
        })
        .add_observer(saved)
        .add_observer(loaded)
        .add_observer(|failed: On<SaveFailed>| panic!("{}", failed.error))
        .add_observer(|failed: On<LoadFailed>| panic!("{}", failed.error))
        .run()
}

fn saved(saved: On<SaveCompleted>, mut query: Query<&mut Health>, mut commands: Commands) {
    println!("saved to {}", saved.path.display());
    query.iter_mut().for_each(|mut health| health.0 = 1); // lose the health…
    commands.load(SlotId::Manual(0)); // …and load it back
}

fn loaded(_: On<LoadCompleted>, query: Query<&Health>, mut exit: MessageWriter<AppExit>) {
    query
        .iter()
        .for_each(|health| println!("loaded {health:?}"));
    exit.write(AppExit::Success);
}
