//! A team server user's own credentials: model providers kept per user, the sealed key
//! handed back as it was given, names unique per user only; agents' variables set and
//! replaced per user; all gone with their user.

use std::sync::Arc;

use hearth_store::{StoreError, UserAgent, UserProvider};
use pretty_assertions::assert_eq;

use super::fixtures::{Backend, on_every_backend};

on_every_backend!(
    a_users_providers_are_theirs_and_go_with_them,
    provider_names_and_kinds_are_checked,
    a_users_agent_variables_are_set_replaced_and_go_with_them,
);

fn provider(user: &str, name: &str, sealed_key: Option<&str>) -> UserProvider {
    UserProvider {
        user: user.to_owned(),
        name: name.to_owned(),
        kind: "openai".to_owned(),
        base_url: Some("https://models.example/v1".to_owned()),
        model: Some("m-1".to_owned()),
        sealed_key: sealed_key.map(str::to_owned),
        created_at: hearth_core::now(),
    }
}

async fn a_users_providers_are_theirs_and_go_with_them(store: Arc<dyn Backend>) {
    let alice = store.create_user("alice").await.unwrap();
    let bob = store.create_user("bob").await.unwrap();
    let added = store
        .add_user_provider(&provider(&alice.id, "mine", Some("v1.sealed")))
        .await
        .unwrap();
    assert_eq!(added.sealed_key.as_deref(), Some("v1.sealed"));
    // The same name is another provider for another user.
    store
        .add_user_provider(&provider(&bob.id, "mine", None))
        .await
        .unwrap();
    store
        .add_user_provider(&provider(&alice.id, "other", None))
        .await
        .unwrap();
    let again = store
        .add_user_provider(&provider(&alice.id, "mine", Some("v1.new")))
        .await
        .unwrap_err();
    assert!(matches!(again, StoreError::Conflict(_)), "{again:?}");

    let found = store.user_provider(&alice.id, "mine").await.unwrap();
    assert_eq!(found, Some(added.clone()), "the first one is kept as added");
    assert_eq!(store.user_provider(&bob.id, "other").await.unwrap(), None);
    let alices: Vec<String> = store
        .user_providers(Some(&alice.id))
        .await
        .unwrap()
        .into_iter()
        .map(|provider| provider.name)
        .collect();
    assert_eq!(alices, ["mine", "other"]);
    assert_eq!(store.user_providers(None).await.unwrap().len(), 3);

    assert!(
        store
            .remove_user_provider(&alice.id, "other")
            .await
            .unwrap()
    );
    assert!(
        !store
            .remove_user_provider(&alice.id, "other")
            .await
            .unwrap()
    );
    assert!(store.remove_user(&alice.id).await.unwrap());
    let left: Vec<(String, String)> = store
        .user_providers(None)
        .await
        .unwrap()
        .into_iter()
        .map(|provider| (provider.user, provider.name))
        .collect();
    assert_eq!(left, [(bob.id.clone(), "mine".to_owned())]);
    // Nobody adds a provider for a user who is not there.
    let nobody = store
        .add_user_provider(&provider(&alice.id, "late", None))
        .await
        .unwrap_err();
    assert!(matches!(nobody, StoreError::NotFound { .. }), "{nobody:?}");
}

async fn provider_names_and_kinds_are_checked(store: Arc<dyn Backend>) {
    let alice = store.create_user("alice").await.unwrap();
    for name in ["", "a.b", "with space", &"x".repeat(65)] {
        let refused = store
            .add_user_provider(&provider(&alice.id, name, None))
            .await
            .unwrap_err();
        assert!(
            matches!(refused, StoreError::InvalidQuery(_)),
            "{name}: {refused:?}"
        );
    }
    let mut acp = provider(&alice.id, "agent", None);
    acp.kind = "acp".to_owned();
    let refused = store.add_user_provider(&acp).await.unwrap_err();
    assert!(
        refused.to_string().contains("openai or anthropic"),
        "{refused}"
    );
    assert!(
        store
            .user_providers(Some(&alice.id))
            .await
            .unwrap()
            .is_empty()
    );
}

async fn a_users_agent_variables_are_set_replaced_and_go_with_them(store: Arc<dyn Backend>) {
    let alice = store.create_user("alice").await.unwrap();
    let bob = store.create_user("bob").await.unwrap();
    let set = |user: &str, agent: &str, sealed: &str| UserAgent {
        user: user.to_owned(),
        agent: agent.to_owned(),
        sealed_env: sealed.to_owned(),
        created_at: hearth_core::now(),
    };
    store
        .set_user_agent(&set(&alice.id, "claude-code", "v1.first"))
        .await
        .unwrap();
    store
        .set_user_agent(&set(&alice.id, "codex", "v1.codex"))
        .await
        .unwrap();
    store
        .set_user_agent(&set(&bob.id, "claude-code", "v1.bobs"))
        .await
        .unwrap();
    // Setting again replaces.
    store
        .set_user_agent(&set(&alice.id, "claude-code", "v1.second"))
        .await
        .unwrap();
    let found = store
        .user_agent(&alice.id, "claude-code")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(found.sealed_env, "v1.second");
    let agents: Vec<String> = store
        .user_agents(&alice.id)
        .await
        .unwrap()
        .into_iter()
        .map(|agent| agent.agent)
        .collect();
    assert_eq!(agents, ["claude-code", "codex"]);
    assert_eq!(
        store
            .user_agent(&bob.id, "claude-code")
            .await
            .unwrap()
            .unwrap()
            .sealed_env,
        "v1.bobs"
    );
    assert!(store.remove_user_agent(&alice.id, "codex").await.unwrap());
    assert!(!store.remove_user_agent(&alice.id, "codex").await.unwrap());
    assert!(store.remove_user(&alice.id).await.unwrap());
    assert!(store.user_agents(&alice.id).await.unwrap().is_empty());
    let nobody = store
        .set_user_agent(&set(&alice.id, "codex", "v1.late"))
        .await
        .unwrap_err();
    assert!(matches!(nobody, StoreError::NotFound { .. }), "{nobody:?}");
}
