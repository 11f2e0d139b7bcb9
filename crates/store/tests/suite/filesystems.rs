//! A full disk and a read-only file system, on real (small, temporary) file systems.
//! These need the privilege to mount; without it they say so and check nothing.

use std::path::{Path, PathBuf};
use std::process::Command;

use hearth_core::{ChatUri, Turn, TurnId, UserMessage, now};
use hearth_store::{Access, SessionQuery, SqliteStore, Store, StoreError};

use super::fixtures::{at, new_session};

/// A tmpfs mounted for one test, unmounted when dropped.
struct SmallDisk {
    path: PathBuf,
    _dir: tempfile::TempDir,
}

impl SmallDisk {
    fn mount(size: &str) -> Option<Self> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("disk");
        std::fs::create_dir(&path).unwrap();
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&path)
            .output()
            .ok()?;
        if !status.status.success() {
            eprintln!(
                "skipping: cannot mount a tmpfs here ({})",
                String::from_utf8_lossy(&status.stderr).trim()
            );
            return None;
        }
        Some(Self { path, _dir: dir })
    }

    fn remount_read_only(&self) {
        let status = Command::new("mount")
            .args(["-o", "remount,ro"])
            .arg(&self.path)
            .status()
            .unwrap();
        assert!(status.success());
    }

    fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        if let Err(error) = Command::new("umount").arg("-l").arg(&self.path).status() {
            eprintln!("could not unmount {}: {error}", self.path.display());
        }
    }
}

#[tokio::test]
async fn a_full_disk_fails_the_write_and_keeps_what_was_stored() {
    let Some(disk) = SmallDisk::mount("700k") else {
        return;
    };
    let store = SqliteStore::open(&disk.path().join("hearth.db"))
        .await
        .unwrap();
    let session = new_session("replay", None, at(0));
    store.create_session(&session).await.unwrap();
    let chat = ChatUri::default_for(&session.summary.uri);
    let mut stored = 0;
    let error = loop {
        let turn = Turn::started(
            TurnId::generate(),
            UserMessage::text("x".repeat(20_000)),
            now(),
        );
        match store.insert_turn(&chat, &turn).await {
            Ok(()) => stored += 1,
            Err(error) => break error,
        }
        assert!(stored < 1000, "the disk never filled up");
    };
    assert!(matches!(error, StoreError::DiskFull { .. }), "{error:?}");
    assert!(
        error.to_string().contains("nothing stored was lost"),
        "{error}"
    );
    // Everything acknowledged before is still there.
    assert_eq!(store.turns(&chat).await.unwrap().len(), stored);
    assert_eq!(
        store
            .list_sessions(&SessionQuery::default())
            .await
            .unwrap()
            .sessions
            .len(),
        1
    );
}

#[tokio::test]
async fn a_read_only_file_system_is_reported() {
    let Some(disk) = SmallDisk::mount("2m") else {
        return;
    };
    let path = disk.path().join("hearth.db");
    let store = SqliteStore::open(&path).await.unwrap();
    store
        .create_session(&new_session("replay", None, at(0)))
        .await
        .unwrap();
    store.close().await;
    let before = std::fs::read(&path).unwrap();
    disk.remount_read_only();
    let error = SqliteStore::open(&path).await.unwrap_err();
    assert!(matches!(error, StoreError::ReadOnly { .. }), "{error:?}");
    assert!(error.to_string().contains("--home"), "{error}");
    assert_eq!(std::fs::read(&path).unwrap(), before);
    let fresh = SqliteStore::open(&disk.path().join("new/hearth.db"))
        .await
        .unwrap_err();
    assert!(matches!(fresh, StoreError::ReadOnly { .. }), "{fresh:?}");
}

#[tokio::test]
async fn a_database_on_a_read_only_file_system_is_read_and_every_change_says_why_it_failed() {
    let Some(disk) = SmallDisk::mount("2m") else {
        return;
    };
    let path = disk.path().join("hearth.db");
    let store = SqliteStore::open(&path).await.unwrap();
    let session = new_session("replay", None, at(0));
    store.create_session(&session).await.unwrap();
    let chat = ChatUri::default_for(&session.summary.uri);
    let turn = Turn::started(TurnId::generate(), UserMessage::text("kept"), now());
    store.insert_turn(&chat, &turn).await.unwrap();
    let written = store.list_sessions(&SessionQuery::default()).await.unwrap();
    store.close().await;
    let before = std::fs::read(&path).unwrap();
    disk.remount_read_only();

    // Neither the `-wal` nor the `-shm` file exists, and neither can be created.
    let store = SqliteStore::open_or_read_only(&path).await.unwrap();
    let Access::ReadOnly { reason } = store.access() else {
        panic!("opened for writing on a read-only file system");
    };
    assert_eq!(reason, "it is on a read-only file system");
    let listed = store.list_sessions(&SessionQuery::default()).await.unwrap();
    assert_eq!(listed, written);
    assert_eq!(store.turns(&chat).await.unwrap(), vec![turn]);

    let error = store
        .create_session(&new_session("replay", None, at(1)))
        .await
        .unwrap_err();
    assert!(matches!(error, StoreError::ReadOnly { .. }), "{error:?}");
    let message = error.to_string();
    assert!(message.contains("open for reading only"), "{message}");
    assert!(message.contains(&path.display().to_string()), "{message}");
    assert_eq!(std::fs::read(&path).unwrap(), before);
}
