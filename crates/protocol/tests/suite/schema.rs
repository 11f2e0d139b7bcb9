use std::path::PathBuf;

use hearth_protocol::{ClientMethod, REGENERATE_COMMAND, SCHEMA_FILE, schema, schema_text};

fn committed_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../schema")
        .join(SCHEMA_FILE)
}

/// The committed schema is what the types generate. `HEARTH_UPDATE_SCHEMA=1` rewrites it.
#[test]
fn committed_schema_matches_the_types() {
    let path = committed_path();
    let generated = schema_text();
    if std::env::var_os("HEARTH_UPDATE_SCHEMA").is_some_and(|value| !value.is_empty()) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{} is out of date with the protocol types; regenerate it with:\n\n    {REGENERATE_COMMAND}\n",
        path.display()
    );
}

#[test]
fn every_method_has_params_and_result() {
    let schema = schema();
    let methods = schema["methods"].as_object().unwrap();
    assert_eq!(methods.len(), ClientMethod::ALL.len());
    for method in ClientMethod::ALL {
        let entry = &methods[method.name()];
        for part in ["params", "result"] {
            let reference = entry[part]["$ref"].as_str().unwrap_or_else(|| {
                panic!(
                    "{} {part} is not a named type: {}",
                    method.name(),
                    entry[part]
                )
            });
            let name = reference.trim_start_matches("#/$defs/");
            assert!(
                schema["$defs"].get(name).is_some(),
                "{} {part}: {reference} is not defined",
                method.name()
            );
        }
        assert_eq!(ClientMethod::from_name(method.name()), Some(*method));
    }
    for name in [
        "subscription/envelope",
        "subscription/resync",
        "subscription/ended",
    ] {
        assert!(schema["notifications"].get(name).is_some(), "{name}");
    }
    assert_eq!(schema["errors"]["codes"]["notFound"], -32004);
}

#[test]
fn method_names_follow_the_conventions() {
    for method in ClientMethod::ALL {
        let name = method.name();
        let bare = ["initialize", "subscribe", "unsubscribe"];
        assert!(
            bare.contains(&name) || name.split('/').count() == 2,
            "{name} is not <resource>/<method>"
        );
        assert!(!name.contains('_'), "{name} is not camelCase");
    }
}
