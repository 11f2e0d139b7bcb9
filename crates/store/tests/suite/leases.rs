//! Chat leases: one holder at a time, renewals keep the epoch, a new owner moves it on,
//! ended and stopped holders' leases are taken over, provider data written at an old
//! epoch is refused, and a chat's lease goes with the chat.

use std::sync::Arc;
use std::time::Duration;

use hearth_core::{ChatUri, HarnessData, now};
use hearth_store::{LeaseGrant, LeaseHolder, Store, StoreError, Takeover};
use pretty_assertions::assert_eq;

use super::fixtures::{at, new_session, on_every_backend};

fn holder(name: &str, pid: u32) -> LeaseHolder {
    LeaseHolder {
        instance: name.into(),
        pid,
        host: "machine".into(),
    }
}

const MINUTE: Duration = Duration::from_secs(60);

async fn chat_in(store: &dyn Store) -> ChatUri {
    let session = new_session("replay", None, at(0));
    store.create_session(&session).await.unwrap();
    ChatUri::default_for(&session.summary.uri)
}

fn grant(epoch: i64, previous_epoch: i64) -> LeaseGrant {
    LeaseGrant {
        epoch,
        previous_epoch,
    }
}

async fn one_holder_at_a_time_and_the_epoch_moves_with_the_owner(store: Arc<dyn Store>) {
    let chat = chat_in(&*store).await;
    let (a, b) = (holder("a", 10), holder("b", 20));
    assert_eq!(
        store
            .take_lease(&chat, &a, MINUTE, &Takeover::Ended)
            .await
            .unwrap(),
        grant(1, 0)
    );
    // Renewing keeps the epoch.
    assert_eq!(
        store
            .take_lease(&chat, &a, MINUTE, &Takeover::Ended)
            .await
            .unwrap(),
        grant(1, 1)
    );
    let error = store
        .take_lease(&chat, &b, MINUTE, &Takeover::Ended)
        .await
        .unwrap_err();
    let StoreError::Leased {
        chat: refused,
        holder: owner,
        expires_at,
    } = &error
    else {
        panic!("{error:?}")
    };
    assert_eq!((refused, owner), (&chat.to_string(), &a));
    assert!(*expires_at > now());
    assert_eq!(
        error.to_string(),
        format!(
            "chat `{chat}` is answering in another Hearth process (pid 10 on machine); wait for it or abort it there"
        )
    );
    assert!(error.is_retryable());
    assert!(!error.is_transient());
    // A release by someone else changes nothing.
    store.release_lease(&chat, &b).await.unwrap();
    assert!(
        store
            .take_lease(&chat, &b, MINUTE, &Takeover::Ended)
            .await
            .is_err()
    );
    store.release_lease(&chat, &a).await.unwrap();
    assert_eq!(
        store
            .take_lease(&chat, &b, MINUTE, &Takeover::Ended)
            .await
            .unwrap(),
        grant(2, 1)
    );
    // Taken back by its last owner after a release, without anyone in between: the same
    // epoch.
    store.release_lease(&chat, &b).await.unwrap();
    assert_eq!(
        store
            .take_lease(&chat, &b, MINUTE, &Takeover::Ended)
            .await
            .unwrap(),
        grant(2, 2)
    );
    let leases = store.leases(chat.session_ref()).await.unwrap();
    assert_eq!(leases.len(), 1);
    assert_eq!(
        (&leases[0].chat, &leases[0].holder, leases[0].epoch),
        (&chat, &b, 2)
    );
    assert!(leases[0].is_live(now()));
}

async fn an_expired_lease_is_taken_and_a_stopped_holders_only_by_compare_and_set(
    store: Arc<dyn Store>,
) {
    let chat = chat_in(&*store).await;
    let (a, b, c) = (holder("a", 10), holder("b", 20), holder("c", 30));
    store
        .take_lease(&chat, &a, Duration::ZERO, &Takeover::Ended)
        .await
        .unwrap();
    assert_eq!(
        store
            .take_lease(&chat, &b, MINUTE, &Takeover::Ended)
            .await
            .unwrap(),
        grant(2, 1)
    );
    // A takeover naming a holder that no longer holds the lease fails.
    assert!(matches!(
        store
            .take_lease(&chat, &c, MINUTE, &Takeover::Stopped("a".into()))
            .await,
        Err(StoreError::Leased { .. })
    ));
    assert_eq!(
        store
            .take_lease(&chat, &c, MINUTE, &Takeover::Stopped("b".into()))
            .await
            .unwrap(),
        grant(3, 2)
    );
}

async fn provider_data_at_an_old_epoch_is_not_written(store: Arc<dyn Store>) {
    let chat = chat_in(&*store).await;
    let blob = |text: &str| HarnessData::from_bytes(text.as_bytes().to_vec());
    let stored = |store: &Arc<dyn Store>| {
        let store = store.clone();
        let chat = chat.clone();
        async move {
            store.chats(chat.session_ref()).await.unwrap()[0]
                .provider_data
                .clone()
        }
    };
    // Never leased: epoch 0.
    assert!(
        store
            .set_provider_data_at(&chat, &blob("zero"), 0)
            .await
            .unwrap()
    );
    assert!(
        !store
            .set_provider_data_at(&chat, &blob("one"), 1)
            .await
            .unwrap()
    );
    assert_eq!(stored(&store).await, Some(blob("zero")));
    let (a, b) = (holder("a", 10), holder("b", 20));
    store
        .take_lease(&chat, &a, MINUTE, &Takeover::Ended)
        .await
        .unwrap();
    assert!(
        store
            .set_provider_data_at(&chat, &blob("a"), 1)
            .await
            .unwrap()
    );
    store.release_lease(&chat, &a).await.unwrap();
    store
        .take_lease(&chat, &b, MINUTE, &Takeover::Ended)
        .await
        .unwrap();
    assert!(
        store
            .set_provider_data_at(&chat, &blob("b"), 2)
            .await
            .unwrap()
    );
    // A's late write, at its epoch, leaves B's blob.
    assert!(
        !store
            .set_provider_data_at(&chat, &blob("a, late"), 1)
            .await
            .unwrap()
    );
    assert_eq!(stored(&store).await, Some(blob("b")));
    let gone = ChatUri::parse(&format!("{chat}x")).unwrap();
    assert!(matches!(
        store.set_provider_data_at(&gone, &blob("x"), 0).await,
        Err(StoreError::NotFound { .. })
    ));
}

async fn a_lease_needs_its_chat_and_goes_with_it(store: Arc<dyn Store>) {
    let chat = chat_in(&*store).await;
    let a = holder("a", 10);
    let unknown = ChatUri::parse(&format!("{chat}x")).unwrap();
    assert!(matches!(
        store
            .take_lease(&unknown, &a, MINUTE, &Takeover::Ended)
            .await,
        Err(StoreError::NotFound { .. })
    ));
    store
        .take_lease(&chat, &a, MINUTE, &Takeover::Ended)
        .await
        .unwrap();
    assert!(store.delete_session(chat.session_ref()).await.unwrap());
    assert_eq!(store.leases(chat.session_ref()).await.unwrap(), []);
    // A session made again under the same URI starts without the old lease.
    let again = super::fixtures::new_session("replay", None, at(1));
    store.create_session(&again).await.unwrap();
    assert_eq!(store.leases(&again.summary.uri).await.unwrap(), []);
}

on_every_backend!(
    one_holder_at_a_time_and_the_epoch_moves_with_the_owner,
    an_expired_lease_is_taken_and_a_stopped_holders_only_by_compare_and_set,
    provider_data_at_an_old_epoch_is_not_written,
    a_lease_needs_its_chat_and_goes_with_it,
);
