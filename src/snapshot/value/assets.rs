//! Asset handles in saved values, and what reflection walks when a value cannot be saved.
//!
//! A `Handle<T>` (or `UntypedHandle`) anywhere inside a reflected value is saved by what
//! identifies it across runs: its asset path (with its label), or its constant UUID. The bytes are
//! those of Bevy's own `HandleSerializeProcessor` (`HandleReference`, `TypedHandleReference`), so
//! a Bevy tool reading a value sees the handle the way Bevy writes it. On load the path is checked
//! (no absolute paths, no `..` leaving the asset folder, only asset sources the game has, at most
//! [`MAX_ASSET_PATH_LEN`] bytes) and loaded through the `AssetServer`: an asset not loaded yet
//! starts loading, and one whose file is gone fails the way Bevy reports any failed load
//! (`AssetLoadFailedEvent`). A refused path leaves the default handle and is listed in the load's
//! report.
//!
//! A handle to an asset made at run time (`Assets::add`) has no path to be saved by; what a save
//! does with one is the app's [`RuntimeAssetHandles`] policy. Assets Bevy makes at run time for
//! the game's entities (the quad mesh Bevy 0.20 gives every `Sprite`) are Bevy's to make again:
//! they are saved as the default handle whatever the policy, and neither counted nor warned
//! about.
//!
//! Only the types that can hold a handle pay for looking for one: `contains_handles` walks a
//! type's reflected layout once, when its column is opened.

use super::reflect_walk::{Walk, may_hold, walk};
use bevy::asset::io::AssetSourceId;
use bevy::asset::uuid::Uuid;
use bevy::asset::{
    AssetId, AssetPath, AssetServer, HandleReference, ReflectHandle, TypedHandleReference,
    UntypedAssetId, UntypedHandle,
};
use bevy::platform::collections::HashSet;
use bevy::prelude::*;
use bevy::reflect::serde::{
    ReflectDeserializerProcessor, ReflectSerializerProcessor, TypedReflectDeserializer,
};
use bevy::reflect::{PartialReflect, ReflectRef, TypeRegistration, TypeRegistry};
use serde::de::DeserializeSeed;
use serde::{Deserialize, Serialize, Serializer};
use std::any::TypeId;
use std::cell::{Cell, OnceCell, RefCell};
use std::collections::BTreeMap;

/// The longest asset path a save may name; longer ones are refused on load.
pub const MAX_ASSET_PATH_LEN: usize = 1024;

/// What a save does with a handle to an asset made at run time (`Assets::add`), which has no
/// path to be saved by. Insert it as a resource (or set
/// [`KeepsakeCorePlugin::runtime_asset_handles`](crate::plugin::KeepsakeCorePlugin::runtime_asset_handles));
/// without one, [`Skip`](Self::Skip) applies.
#[derive(Resource, Clone, Copy, Debug, Default, PartialEq, Eq, Reflect)]
#[reflect(Resource, Clone, Debug, Default, PartialEq)]
pub enum RuntimeAssetHandles {
    /// Save the default handle in its place (a loaded component keeps its default handle), warn
    /// once per type and field, and count it in the save's report.
    #[default]
    Skip,
    /// Fail the save, naming the type and the field.
    Fail,
    /// Like [`Skip`](Self::Skip), without the warning (still counted).
    Silent,
}

/// Handles to run-time assets that a capture saved as the default handle.
#[derive(Clone, Debug, PartialEq, Eq, Reflect)]
#[reflect(Clone, Debug, PartialEq)]
pub struct LeftOutHandle {
    /// Where the handle was, e.g. `my_game::Looks.sprite`.
    pub field: String,
    /// How many values had one there.
    pub count: u32,
}

/// A saved asset path that a load refused; the handle was left at its default.
#[derive(Clone, Debug, PartialEq, Eq, Reflect)]
#[reflect(Clone, Debug, PartialEq)]
pub struct RefusedAssetPath {
    /// The path as saved (cut to 200 characters).
    pub path: String,
    /// Why it was refused.
    pub reason: String,
}

/// Whether values of `type_id` can hold an asset handle, from the reflected layout (types the
/// registry cannot describe count as "maybe").
pub(crate) fn contains_handles(registry: &TypeRegistry, type_id: TypeId) -> bool {
    may_hold(registry, type_id, &|id, registration| {
        id == TypeId::of::<UntypedHandle>()
            || registration.is_some_and(|r| r.data::<ReflectHandle>().is_some())
    })
}

// ---------------------------------------------------------------------------------------------
// Saving

/// What one capture learns about handles, shared by the writers of its columns.
#[derive(Default)]
pub(crate) struct CaptureAssets {
    policy: RuntimeAssetHandles,
    /// Run-time assets Bevy made (the sprite quad): left out without a word.
    bevy_made: Vec<UntypedAssetId>,
    /// Run-time handles met by the value being written.
    in_value: Cell<u32>,
    /// Field → how many values held a run-time handle there.
    left_out: RefCell<BTreeMap<String, u32>>,
    /// How many values held run-time handles (each counted once).
    values_left_out: Cell<u32>,
}

impl CaptureAssets {
    /// `bevy_made`: the run-time assets Bevy made for the saved entities, which are left out
    /// whatever the policy, without being counted.
    pub(crate) fn new(policy: RuntimeAssetHandles, bevy_made: Vec<UntypedAssetId>) -> Self {
        CaptureAssets {
            policy,
            bevy_made,
            ..CaptureAssets::default()
        }
    }

    /// The app's policy for run-time handles.
    pub(crate) fn policy(&self) -> RuntimeAssetHandles {
        self.policy
    }

    /// The processor for writing one value (`handles`: whether its type can hold any).
    pub(crate) fn processor(&self, handles: bool) -> SaveProcessor<'_> {
        self.in_value.set(0);
        SaveProcessor {
            assets: handles.then_some(self),
        }
    }

    /// After writing `value` of `root`: records where its run-time handles were (the slow path,
    /// taken only when there were some).
    pub(crate) fn after_value(
        &self,
        root: &str,
        value: &dyn PartialReflect,
        registry: &TypeRegistry,
    ) {
        if self.in_value.get() == 0 {
            return;
        }
        self.values_left_out.set(self.values_left_out.get() + 1);
        let mut left_out = self.left_out.borrow_mut();
        for field in runtime_handle_fields(root, value, registry, &self.bevy_made) {
            *left_out.entry(field).or_default() += 1;
        }
    }

    /// How many values written so far held run-time handles: a capture compares it before and
    /// after a table to know whether that table's pieces may be kept (see `capture/column.rs`).
    pub(crate) fn values_left_out(&self) -> u32 {
        self.values_left_out.get()
    }

    /// Every field that held run-time handles, with how many values held one there.
    pub(crate) fn into_left_out(self) -> Vec<LeftOutHandle> {
        self.left_out
            .into_inner()
            .into_iter()
            .map(|(field, count)| LeftOutHandle { field, count })
            .collect()
    }
}

/// Writes `Entity` as its 64-bit id and handles by path, everywhere inside a reflected value.
pub(crate) struct SaveProcessor<'a> {
    /// `None` for types that cannot hold a handle: no per-field look-up at all.
    assets: Option<&'a CaptureAssets>,
}

impl ReflectSerializerProcessor for SaveProcessor<'_> {
    fn try_serialize<S: Serializer>(
        &self,
        value: &dyn PartialReflect,
        registry: &TypeRegistry,
        serializer: S,
    ) -> Result<Result<S::Ok, S>, S::Error> {
        if let Some(entity) = value.try_downcast_ref::<Entity>() {
            return serializer.serialize_u64(entity.to_bits()).map(Ok);
        }
        let Some(assets) = self.assets else {
            return Ok(Err(serializer));
        };
        let Some(value) = value.try_as_reflect() else {
            return Ok(Err(serializer));
        };
        if let Some(handle) = value.downcast_ref::<UntypedHandle>() {
            let Some(asset) = registry.get(handle.type_id()) else {
                return Err(serde::ser::Error::custom(
                    "the asset type of an UntypedHandle is not registered for reflection; \
                     register it with app.register_type::<T>()",
                ));
            };
            let reference = TypedHandleRef {
                asset_type: asset.type_info().type_path(),
                reference: assets.reference(handle)?,
            };
            return reference.serialize(serializer).map(Ok);
        }
        let Some(reflect_handle) = registry.get_type_data::<ReflectHandle>(value.type_id()) else {
            return Ok(Err(serializer));
        };
        let Some(handle) = reflect_handle.downcast_handle_untyped(value.as_any()) else {
            return Ok(Err(serializer));
        };
        assets.reference(&handle)?.serialize(serializer).map(Ok)
    }
}

impl CaptureAssets {
    /// What identifies `handle` across runs; a run-time handle follows the policy.
    fn reference<'h, E: serde::ser::Error>(
        &self,
        handle: &'h UntypedHandle,
    ) -> Result<HandleRef<'h>, E> {
        if let Some(path) = handle.path() {
            return Ok(HandleRef::Path(PathText(path)));
        }
        if let UntypedHandle::Uuid { uuid, .. } = handle {
            return Ok(HandleRef::Uuid(*uuid));
        }
        if self.bevy_made.contains(&handle.id()) {
            return Ok(HandleRef::Uuid(AssetId::<()>::DEFAULT_UUID));
        }
        if self.policy == RuntimeAssetHandles::Fail {
            return Err(E::custom(RUNTIME_HANDLE));
        }
        self.in_value.set(self.in_value.get() + 1);
        Ok(HandleRef::Uuid(AssetId::<()>::DEFAULT_UUID))
    }
}

/// Bevy's [`HandleReference`], written the way its derive writes it but borrowing the handle's
/// path: a sprite world writes a handle per entity, and copying and formatting each path was
/// about a tenth of capturing one (`BENCHMARKS.md`, the `handles` shape).
#[derive(Serialize)]
#[serde(rename = "HandleReference")]
enum HandleRef<'a> {
    Path(PathText<'a>),
    Uuid(Uuid),
}

/// Bevy's [`TypedHandleReference`], written the way its derive writes it, borrowing.
#[derive(Serialize)]
#[serde(rename = "TypedHandleReference")]
struct TypedHandleRef<'a> {
    asset_type: &'a str,
    reference: HandleRef<'a>,
}

/// An asset path written as `AssetPath` writes itself (the text of its `Display`), without
/// building that text when the path is all there is (no source, no label, valid UTF-8).
struct PathText<'a>(&'a AssetPath<'static>);

impl Serialize for PathText<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let path = self.0;
        match (path.source(), path.label(), path.path().to_str()) {
            (AssetSourceId::Default, None, Some(text)) => serializer.serialize_str(text),
            _ => serializer.serialize_str(&path.to_string()),
        }
    }
}

const RUNTIME_HANDLE: &str = "it holds a handle to an asset made at run time (Assets::add), \
     which has no path to be saved by";

/// The paths (`my_game::Looks.sprite`) of the run-time handles inside `value` (those to
/// `bevy_made` assets aside).
fn runtime_handle_fields(
    root: &str,
    value: &dyn PartialReflect,
    registry: &TypeRegistry,
    bevy_made: &[UntypedAssetId],
) -> Vec<String> {
    let mut found = Vec::new();
    walk(root.to_owned(), value, &mut |path, value| {
        if let Some(handle) = as_handle(value, registry)
            && handle.path().is_none()
            && !matches!(handle, UntypedHandle::Uuid { .. })
            && !bevy_made.contains(&handle.id())
        {
            found.push(path.to_owned());
            return Walk::Skip;
        }
        Walk::Into
    });
    found
}

fn as_handle(value: &dyn PartialReflect, registry: &TypeRegistry) -> Option<UntypedHandle> {
    let value = value.try_as_reflect()?;
    if let Some(handle) = value.downcast_ref::<UntypedHandle>() {
        return Some(handle.clone());
    }
    registry
        .get_type_data::<ReflectHandle>(value.type_id())?
        .downcast_handle_untyped(value.as_any())
}

// ---------------------------------------------------------------------------------------------
// Explaining capture failures

/// Why a value could not be captured, found by walking it: the field, the reason, the fix.
#[derive(Debug)]
pub(crate) struct CaptureProblem {
    pub(crate) field: String,
    pub(crate) reason: String,
    pub(crate) fix: String,
}

impl CaptureProblem {
    /// The capture error for a value of `type_path`.
    pub(crate) fn into_error(self, type_path: &str) -> crate::snapshot::SnapshotError {
        crate::snapshot::SnapshotError::Capture {
            type_path: type_path.to_owned(),
            field: self.field,
            reason: self.reason,
            fix: self.fix,
        }
    }

    /// A failure the walk could not pin on one field (a type's own `Serialize` failed).
    pub(crate) fn whole(type_path: &str, reason: String) -> Self {
        CaptureProblem {
            field: type_path.to_owned(),
            reason,
            fix: format!(
                "check how {type_path} serializes, or leave it out of the save (do not register it)"
            ),
        }
    }
}

/// Finds the first field of `value` that cannot be saved, and says what to do about it.
pub(crate) fn diagnose(
    root: &str,
    value: &dyn PartialReflect,
    registry: &TypeRegistry,
    policy: RuntimeAssetHandles,
) -> Option<CaptureProblem> {
    let mut problem = None;
    walk(root.to_owned(), value, &mut |path, value| {
        if problem.is_some() {
            return Walk::Skip;
        }
        match check_leaf(root, value, registry, policy) {
            Leaf::Fine => Walk::Skip,
            Leaf::Container => Walk::Into,
            Leaf::Problem(reason, fix) => {
                problem = Some(CaptureProblem {
                    field: path.to_owned(),
                    reason,
                    fix,
                });
                Walk::Skip
            }
        }
    });
    problem
}

enum Leaf {
    /// Saved as it is (an entity, a handle with a path, a type with its own serde).
    Fine,
    /// Saved field by field: look inside.
    Container,
    /// Cannot be saved: why, and what to do.
    Problem(String, String),
}

fn check_leaf(
    root: &str,
    value: &dyn PartialReflect,
    registry: &TypeRegistry,
    policy: RuntimeAssetHandles,
) -> Leaf {
    let leave_out = format!("or leave {root} out of the save (do not register it)");
    let Some(info) = value.get_represented_type_info() else {
        return Leaf::Problem(
            format!("it is a dynamic {} value", value.reflect_type_path()),
            format!("store a concrete type there, {leave_out}"),
        );
    };
    let type_path = info.type_path();
    if info.type_id() == TypeId::of::<Entity>() {
        return Leaf::Fine;
    }
    let is_handle = info.type_id() == TypeId::of::<UntypedHandle>()
        || type_path.starts_with("bevy_asset::handle::Handle<")
        || registry
            .get_type_data::<ReflectHandle>(info.type_id())
            .is_some();
    if is_handle {
        return check_handle(value, registry, policy, type_path, &leave_out);
    }
    let Some(registration) = registry.get(info.type_id()) else {
        return Leaf::Problem(
            format!("{type_path} is not registered for reflection"),
            format!("register it with app.register_type::<{type_path}>(), {leave_out}"),
        );
    };
    if serializable(registration) {
        return Leaf::Fine;
    }
    match value.reflect_ref() {
        ReflectRef::Opaque(_) => Leaf::Problem(
            format!("{type_path} reflects neither Serialize nor any fields"),
            format!(
                "add #[reflect(Serialize, Deserialize)] to {type_path} (or derive Reflect on a \
                 type with fields instead), {leave_out}"
            ),
        ),
        _ => Leaf::Container,
    }
}

fn check_handle(
    value: &dyn PartialReflect,
    registry: &TypeRegistry,
    policy: RuntimeAssetHandles,
    type_path: &str,
    leave_out: &str,
) -> Leaf {
    match as_handle(value, registry) {
        None => Leaf::Problem(
            format!("the asset type of this {type_path} is not registered"),
            format!(
                "register the asset type (app.init_asset::<T>() and app.register_type::<{type_path}>()), {leave_out}"
            ),
        ),
        Some(handle)
            if handle.path().is_none()
                && !matches!(handle, UntypedHandle::Uuid { .. })
                && policy == RuntimeAssetHandles::Fail =>
        {
            Leaf::Problem(
                RUNTIME_HANDLE.to_owned(),
                format!(
                    "make the asset again when the entity appears (an observer on Add, or on \
                     WorldRestored), and choose RuntimeAssetHandles::Skip to save the default \
                     handle in its place; or load the asset from a file, {leave_out}"
                ),
            )
        }
        Some(_) => Leaf::Fine,
    }
}

fn serializable(registration: &TypeRegistration) -> bool {
    registration
        .data::<bevy::reflect::ReflectSerialize>()
        .is_some()
}

// ---------------------------------------------------------------------------------------------
// Loading

/// Turns saved handle references back into handles while a snapshot is decoded.
pub(crate) struct HandleLoader<'a> {
    server: Option<&'a AssetServer>,
    refused: RefCell<Vec<RefusedAssetPath>>,
    /// The asset types the app has a `Handle<A>` registration for (found on first use): an
    /// untyped handle may only name one of these.
    asset_types: OnceCell<HashSet<TypeId>>,
    /// Why the last value failed, kept here because postcard's errors drop custom messages.
    failure: RefCell<Option<String>>,
}

impl<'a> HandleLoader<'a> {
    /// Loads paths through `server`; without one, every path is refused (and reported).
    pub(crate) fn new(server: Option<&'a AssetServer>) -> Self {
        HandleLoader {
            server,
            refused: RefCell::default(),
            asset_types: OnceCell::new(),
            failure: RefCell::default(),
        }
    }

    /// The processor for reading one value (`handles`: whether its type can hold any).
    pub(crate) fn processor(&self, handles: bool) -> LoadProcessor<'_, 'a> {
        LoadProcessor {
            loader: handles.then_some(self),
        }
    }

    /// Reads one value of `registration`'s type from the front of `bytes` with Bevy's reflection
    /// deserializer, entities as ids and, when `handles`, handles by path: the value and how
    /// many bytes it took. A handle's refusal is the error, rather than postcard's message.
    pub(crate) fn deserialize(
        &self,
        registration: &TypeRegistration,
        registry: &TypeRegistry,
        bytes: &[u8],
        handles: bool,
    ) -> Result<(Box<dyn PartialReflect>, usize), String> {
        let mut deserializer = postcard::Deserializer::from_bytes(bytes);
        let mut processor = self.processor(handles);
        let value =
            TypedReflectDeserializer::with_processor(registration, registry, &mut processor)
                .deserialize(&mut deserializer)
                .map_err(|error| self.take_failure().unwrap_or_else(|| error.to_string()))?;
        let left = deserializer.finalize().map_err(|error| error.to_string())?;
        Ok((value, bytes.len() - left.len()))
    }

    /// Whether `type_id` is an asset type of this app (it has a registered `Handle<A>`).
    fn is_asset_type(&self, registry: &TypeRegistry, type_id: TypeId) -> bool {
        self.asset_types
            .get_or_init(|| {
                registry
                    .iter_with_data::<ReflectHandle>()
                    .map(|(_, handle)| handle.asset_type_id())
                    .collect()
            })
            .contains(&type_id)
    }

    /// Why the value just read failed, if a handle made it fail.
    pub(crate) fn take_failure(&self) -> Option<String> {
        self.failure.borrow_mut().take()
    }

    /// The paths refused so far.
    pub(crate) fn into_refused(self) -> Vec<RefusedAssetPath> {
        self.refused.into_inner()
    }

    fn resolve(&self, asset_type: TypeId, reference: HandleReference) -> UntypedHandle {
        let path = match reference {
            HandleReference::Uuid(uuid) => {
                return UntypedHandle::Uuid {
                    type_id: asset_type,
                    uuid,
                };
            }
            HandleReference::Path(path) => path,
        };
        match self
            .admit(&path)
            .and_then(|server| load(server, asset_type, &path))
        {
            Ok(handle) => handle,
            Err(reason) => {
                let shown: String = path.to_string().chars().take(200).collect();
                self.refused.borrow_mut().push(RefusedAssetPath {
                    path: shown,
                    reason,
                });
                UntypedHandle::Uuid {
                    type_id: asset_type,
                    uuid: AssetId::<()>::DEFAULT_UUID,
                }
            }
        }
    }

    /// The server to load `path` with, if the path stays inside the game's asset sources.
    fn admit(&self, path: &AssetPath<'_>) -> Result<&'a AssetServer, String> {
        let Some(server) = self.server else {
            return Err("the app has no AssetServer (add AssetPlugin)".to_owned());
        };
        let text = path.path().as_os_str().len() + path.label().map_or(0, str::len);
        if text > MAX_ASSET_PATH_LEN {
            return Err(format!("longer than {MAX_ASSET_PATH_LEN} bytes"));
        }
        if path.is_unapproved() {
            return Err("it leaves the asset folder (absolute, or `..` above it)".to_owned());
        }
        if server.get_source(path.source().clone_owned()).is_err() {
            return Err(format!("the game has no asset source {:?}", path.source()));
        }
        Ok(server)
    }
}

/// Starts loading `path` as an asset of type `asset_type`.
///
/// The `AssetServer` panics when asked for a handle of an asset type the app never initialised
/// (`init_asset`). Untyped handles may only name types with a registered `Handle<A>` (which
/// `init_asset` registers), so what is left is a registered but never initialised `Handle<A>`
/// field: the panic is caught and the path refused. (Under `panic = "abort"` such a game could
/// not create that handle itself either.) The server's locks survive it: it ignores poisoning.
fn load(
    server: &AssetServer,
    asset_type: TypeId,
    path: &AssetPath<'_>,
) -> Result<UntypedHandle, String> {
    let load = || {
        server
            .load_builder()
            .load_erased(asset_type, path.clone_owned())
    };
    CATCHING_PANIC.set(true);
    let loaded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(load));
    CATCHING_PANIC.set(false);
    loaded.map_err(|_| "its asset type is not initialised in this app (init_asset)".to_owned())
}

thread_local! {
    /// Set while [`load`] catches the asset server's panic: the crash save's panic hook
    /// (`plugin::crash`) writes nothing for a panic that does not end the game.
    static CATCHING_PANIC: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether the panic under way on this thread is one a load catches (see [`load`]).
pub(crate) fn panic_is_caught_here() -> bool {
    CATCHING_PANIC.get()
}

/// Reads `Entity` ids and handle references back, everywhere inside a reflected value.
pub(crate) struct LoadProcessor<'l, 'a> {
    /// `None` for types that cannot hold a handle.
    loader: Option<&'l HandleLoader<'a>>,
}

impl ReflectDeserializerProcessor for LoadProcessor<'_, '_> {
    fn try_deserialize<'de, D: serde::Deserializer<'de>>(
        &mut self,
        registration: &TypeRegistration,
        registry: &TypeRegistry,
        deserializer: D,
    ) -> Result<Result<Box<dyn PartialReflect>, D>, D::Error> {
        use serde::de::Error;
        if registration.type_id() == TypeId::of::<Entity>() {
            let bits = u64::deserialize(deserializer)?;
            let entity = Entity::try_from_bits(bits)
                .ok_or_else(|| D::Error::custom(format!("{bits:#x} is not a valid entity id")))?;
            return Ok(Ok(Box::new(entity)));
        }
        let Some(loader) = self.loader else {
            return Ok(Err(deserializer));
        };
        if registration.type_id() == TypeId::of::<UntypedHandle>() {
            let saved = TypedHandleReference::deserialize(deserializer)?;
            let asset = registry
                .get_with_type_path(&saved.asset_type)
                .map(TypeRegistration::type_id)
                .filter(|&asset| loader.is_asset_type(registry, asset))
                .ok_or_else(|| {
                    let reason = format!(
                        "a saved handle names {}, which is not an asset type of this app",
                        saved.asset_type
                    );
                    *loader.failure.borrow_mut() = Some(reason.clone());
                    D::Error::custom(reason)
                })?;
            return Ok(Ok(Box::new(loader.resolve(asset, saved.reference))));
        }
        let Some(reflect_handle) = registration.data::<ReflectHandle>() else {
            return Ok(Err(deserializer));
        };
        let reference = HandleReference::deserialize(deserializer)?;
        let handle = loader.resolve(reflect_handle.asset_type_id(), reference);
        Ok(Ok(reflect_handle.typed(handle)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Our borrowing writers write Bevy's own bytes, for every kind of path and for a UUID.
    #[test]
    fn handle_references_are_written_as_bevy_writes_them() {
        let paths = [
            "levels/one.level",
            "levels/two.level#part",
            "mods://banners/red.png",
            "mods://banners/red.png#frame 3",
            "ünïcödé/sprite.png",
        ];
        for text in paths {
            let path = AssetPath::parse(text).into_owned();
            let ours = postcard::to_stdvec(&HandleRef::Path(PathText(&path))).unwrap();
            let bevy = postcard::to_stdvec(&HandleReference::Path(path.clone())).unwrap();
            assert_eq!(ours, bevy, "{text}");
            let ours = TypedHandleRef {
                asset_type: "game::Art",
                reference: HandleRef::Path(PathText(&path)),
            };
            let bevy = TypedHandleReference {
                asset_type: "game::Art".into(),
                reference: HandleReference::Path(path.clone()),
            };
            assert_eq!(
                postcard::to_stdvec(&ours).unwrap(),
                postcard::to_stdvec(&bevy).unwrap(),
                "{text}"
            );
        }
        let uuid = AssetId::<()>::DEFAULT_UUID;
        assert_eq!(
            postcard::to_stdvec(&HandleRef::Uuid(uuid)).unwrap(),
            postcard::to_stdvec(&HandleReference::Uuid(uuid)).unwrap()
        );
    }
}
