//! Test doubles for the store's filesystem seam (feature `testing`, off by default; never in a
//! game).
//!
//! A test that injects a fault usually changes one call of the filesystem and forwards every
//! other to the real one. [`Forward`] is that filesystem: each call goes to an inner
//! [`FileSystem`] ([`OsFileSystem`] unless told otherwise), but the calls given a closure of
//! their own (`on_open_read`, `on_create_new`, `on_lock`, …), which receive the inner
//! filesystem to forward to when they choose.

use super::fs::{FileSystem, LockGuard, OsFileSystem, ReadFile, WriteFile};
use std::ffi::OsString;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A filesystem that forwards every call to an inner one, except the calls given a closure.
///
/// Each `on_*` method replaces one [`FileSystem`] call with a closure, which is handed the
/// inner filesystem and the call's paths. Cloning is cheap (the closures are shared), so a
/// test can keep a handle while the store holds another.
///
/// # Example
///
/// The real filesystem, whose new files all refuse their bytes as a full disk would:
///
/// ```
/// use keepsake_core::store::testing::Forward;
/// use keepsake_core::store::{FileSystem, WriteFile};
/// use std::io::{self, Write};
///
/// struct Full;
/// impl Write for Full {
///     fn write(&mut self, _: &[u8]) -> io::Result<usize> {
///         Err(io::Error::from(io::ErrorKind::StorageFull))
///     }
///     fn flush(&mut self) -> io::Result<()> {
///         Ok(())
///     }
/// }
/// impl WriteFile for Full {
///     fn sync_all(&mut self) -> io::Result<()> {
///         Ok(())
///     }
/// }
///
/// let full_disk = Forward::os().on_create_new(|_, _| Ok(Box::new(Full)));
/// let dir = std::env::temp_dir().join(format!("forward-doc-{}", std::process::id()));
/// full_disk.create_dir_all(&dir)?; // forwarded to the real filesystem
/// let mut file = full_disk.create_new(&dir.join("save.tmp"))?;
/// assert_eq!(file.write(b"x").unwrap_err().kind(), io::ErrorKind::StorageFull);
/// std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), io::Error>(())
/// ```
#[derive(Clone)]
pub struct Forward {
    inner: Arc<dyn FileSystem>,
    hooks: Hooks,
}

impl Forward {
    /// Forwards every call to the real filesystem ([`OsFileSystem`]).
    pub fn os() -> Self {
        Self::over(OsFileSystem)
    }

    /// Forwards every call to `inner` (another test filesystem, for one more fault on top).
    pub fn over(inner: impl FileSystem + 'static) -> Self {
        Self {
            inner: Arc::new(inner),
            hooks: Hooks::default(),
        }
    }
}

impl Forward {
    /// The real filesystem, in a process that dies at the first removal of `dies_at`: that
    /// removal fails, and so does every file created or removed after it (nothing the
    /// process does then lands), as a store sees a kill part way through a delete or a choice.
    pub fn dying_at_removal_of(dies_at: PathBuf) -> Self {
        let dead = Arc::new(AtomicBool::new(false));
        let dying = dead.clone();
        let killed = || io::Error::other("the process is dead");
        Self::os()
            .on_remove_file(move |fs, path| {
                if path == dies_at {
                    dying.store(true, Ordering::SeqCst);
                }
                match dying.load(Ordering::SeqCst) {
                    true => Err(killed()),
                    false => fs.remove_file(path),
                }
            })
            .on_create_new(move |fs, path| match dead.load(Ordering::SeqCst) {
                true => Err(killed()),
                false => fs.create_new(path),
            })
    }
}

impl Default for Forward {
    fn default() -> Self {
        Self::os()
    }
}

/// Writes the hooks, the `on_*` builders and the forwarding [`FileSystem`] impl for each call
/// (`name, builder(paths) -> returned type`): one list, so a call can never be forwarded
/// without being overridable or the other way round.
macro_rules! forward_calls {
    ($($(#[$doc:meta])* $call:ident, $on:ident($($path:ident),+) -> $ret:ty;)+) => {
        #[derive(Clone, Default)]
        struct Hooks {
            $($call: Option<Arc<dyn Fn(&dyn FileSystem, $(forward_calls!(@path $path)),+)
                -> io::Result<$ret> + Send + Sync>>,)+
        }

        impl Hooks {
            /// The names of the calls given a closure.
            fn overridden(&self) -> Vec<&'static str> {
                let mut names = Vec::new();
                $(if self.$call.is_some() {
                    names.push(stringify!($call));
                })+
                names
            }
        }

        impl Forward {
            $(
                $(#[$doc])*
                #[must_use]
                pub fn $on(
                    mut self,
                    call: impl Fn(&dyn FileSystem, $(forward_calls!(@path $path)),+)
                        -> io::Result<$ret> + Send + Sync + 'static,
                ) -> Self {
                    self.hooks.$call = Some(Arc::new(call));
                    self
                }
            )+
        }

        impl FileSystem for Forward {
            $(fn $call(&self, $($path: &Path),+) -> io::Result<$ret> {
                match &self.hooks.$call {
                    Some(call) => call(&*self.inner, $($path),+),
                    None => self.inner.$call($($path),+),
                }
            })+
        }
    };
    (@path $path:ident) => { &Path };
}

forward_calls! {
    /// Replaces [`FileSystem::create_dir_all`].
    create_dir_all, on_create_dir_all(path) -> ();
    /// Replaces [`FileSystem::list_dir`].
    list_dir, on_list_dir(path) -> Vec<OsString>;
    /// Replaces [`FileSystem::open_read`]: a file that lies about its size, a read that fails.
    open_read, on_open_read(path) -> Box<dyn ReadFile>;
    /// Replaces [`FileSystem::create_new`]: typically the inner file wrapped in a writer that
    /// fails, waits or counts.
    create_new, on_create_new(path) -> Box<dyn WriteFile>;
    /// Replaces [`FileSystem::rename`].
    rename, on_rename(from, to) -> ();
    /// Replaces [`FileSystem::hard_link`].
    hard_link, on_hard_link(from, to) -> ();
    /// Replaces [`FileSystem::remove_file`].
    remove_file, on_remove_file(path) -> ();
    /// Replaces [`FileSystem::sync_dir`].
    sync_dir, on_sync_dir(path) -> ();
    /// Replaces [`FileSystem::lock`].
    lock, on_lock(path) -> Box<dyn LockGuard>;
    /// Replaces [`FileSystem::try_lock`].
    try_lock, on_try_lock(path) -> Option<Box<dyn LockGuard>>;
}

impl fmt::Debug for Forward {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Forward")
            .field("inner", &self.inner)
            .field("overridden", &self.hooks.overridden())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_calls_given_a_closure_are_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let refused = dir.path().join("refused");
        let refused_too = refused.clone();
        let fs = Forward::os().on_open_read(move |inner, path| {
            if path == refused_too {
                return Err(io::Error::from(io::ErrorKind::PermissionDenied));
            }
            inner.open_read(path)
        });
        std::fs::write(&refused, b"x").unwrap();
        std::fs::write(dir.path().join("kept"), b"x").unwrap();
        let error = fs.open_read(&refused).err().unwrap();
        assert_eq!(error.kind(), io::ErrorKind::PermissionDenied);
        assert!(fs.open_read(&dir.path().join("kept")).is_ok());
        assert_eq!(fs.list_dir(dir.path()).unwrap().len(), 2, "forwarded");
        assert_eq!(
            format!("{fs:?}"),
            r#"Forward { inner: OsFileSystem, overridden: ["open_read"] }"#
        );
    }
}
