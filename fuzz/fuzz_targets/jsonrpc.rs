//! JSON-RPC message decoding: what `hearth serve` and `hearth app-server --stdio` read
//! from clients, and what the CLI's client reads from a server.
//!
//! Input: messages, one per line (as on stdio). Each is classified; a request's params
//! are read as its method's params (every URI in them parsed, as the server does);
//! notifications and responses are read as the client reads them, converted to domain
//! values and folded into a mirror of the subscribed resource. Checks that a request
//! written back reads as the same request, that every URI that parses prints as text
//! that parses to the same URI, and that nothing panics.

#![no_main]

use hearth_core as core;
use hearth_protocol::{
    self as wire, ChatResolveResponse, ClientMethod, EnvelopeNotified, Incoming, Method,
    NotificationMethod, ResyncNotification, Resynced, SessionListResponse, SubscribeResponse,
    SubscriptionEnded, SubscriptionEndedNotification, error_text, request_text,
};
use libfuzzer_sys::fuzz_target;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Reads `value` as a `T`, absent (`null`) as `{}`, as the server reads params.
fn read<T: DeserializeOwned>(value: &Value) -> Option<T> {
    let value = if value.is_null() {
        Value::Object(serde_json::Map::new())
    } else {
        value.clone()
    };
    serde_json::from_value(value).ok()
}

/// Parses every string in `value` as a resource URI; one that parses must print as text
/// that parses to the same URI.
fn parse_uris(value: &Value) {
    match value {
        Value::String(text) => {
            if let Ok(uri) = core::ResourceUri::parse(text) {
                let printed = uri.to_string();
                assert_eq!(
                    core::ResourceUri::parse(&printed).ok(),
                    Some(uri),
                    "{text:?} parses, but prints as {printed:?}"
                );
            }
            std::hint::black_box(core::HarnessId::parse(text).is_ok());
        }
        Value::Array(items) => items.iter().for_each(parse_uris),
        Value::Object(members) => members.values().for_each(parse_uris),
        _ => {}
    }
}

/// Reads a request's params as its method's.
fn request<M: Method>(params: &Value) {
    if let Some(params) = read::<M::Params>(params) {
        std::hint::black_box(&params);
        parse_uris(&serde_json::to_value(&params).unwrap_or_default());
    }
}

fn request_params(method: ClientMethod, params: &Value) {
    use hearth_protocol::*;
    match method {
        ClientMethod::Initialize => request::<Initialize>(params),
        ClientMethod::SessionList => request::<SessionList>(params),
        ClientMethod::SessionCreate => request::<SessionCreate>(params),
        ClientMethod::SessionDispose => request::<SessionDispose>(params),
        ClientMethod::SessionFork => request::<SessionFork>(params),
        ClientMethod::SessionRename => request::<SessionRename>(params),
        ClientMethod::SessionMark => request::<SessionMark>(params),
        ClientMethod::SessionShare => request::<SessionShare>(params),
        ClientMethod::ChatCreate => {
            request::<ChatCreate>(params);
            if let Some(params) = read::<ChatCreateParams>(params) {
                std::hint::black_box(core::ChatSeed::try_from(params.seed).is_ok());
            }
        }
        ClientMethod::ChatDispose => request::<ChatDispose>(params),
        ClientMethod::ChatSend => request::<ChatSend>(params),
        ClientMethod::ChatAbort => request::<ChatAbort>(params),
        ClientMethod::ChatCompact => request::<ChatCompact>(params),
        ClientMethod::ChatSetModel => request::<ChatSetModel>(params),
        ClientMethod::ChatSetMode => request::<ChatSetMode>(params),
        ClientMethod::ChatSetDraft => request::<ChatSetDraft>(params),
        ClientMethod::ChatQueue => request::<ChatQueue>(params),
        ClientMethod::ChatSetQueue => request::<ChatSetQueue>(params),
        ClientMethod::ChatResolve => request::<ChatResolve>(params),
        ClientMethod::ChatTurns => request::<ChatTurns>(params),
        ClientMethod::Subscribe => request::<Subscribe>(params),
        ClientMethod::Unsubscribe => request::<Unsubscribe>(params),
        ClientMethod::ProposalList => request::<ProposalList>(params),
        ClientMethod::ProposalApprove => request::<ProposalApprove>(params),
        ClientMethod::ProposalReject => request::<ProposalReject>(params),
        ClientMethod::PermissionRespond => request::<PermissionRespond>(params),
        ClientMethod::PermissionList => request::<PermissionList>(params),
        ClientMethod::PermissionGrants => request::<PermissionGrants>(params),
        ClientMethod::PermissionRevokeGrant => request::<PermissionRevokeGrant>(params),
        ClientMethod::HarnessStart => request::<HarnessStart>(params),
        ClientMethod::ProviderList => request::<ProviderList>(params),
        ClientMethod::ProviderTest => request::<ProviderTest>(params),
        ClientMethod::ProviderAdd => request::<ProviderAdd>(params),
        ClientMethod::ProviderRemove => request::<ProviderRemove>(params),
        ClientMethod::AgentConnect => request::<AgentConnect>(params),
        ClientMethod::AgentDisconnect => request::<AgentDisconnect>(params),
        ClientMethod::AuditList => request::<AuditList>(params),
        ClientMethod::AuditVerify => request::<AuditVerify>(params),
        ClientMethod::ProjectList => request::<ProjectList>(params),
        ClientMethod::ProjectGet => request::<ProjectGet>(params),
        ClientMethod::ProjectCreate => request::<ProjectCreate>(params),
        ClientMethod::ProjectRename => request::<ProjectRename>(params),
        ClientMethod::ProjectDelete => request::<ProjectDelete>(params),
        ClientMethod::ProjectAddSource => request::<ProjectAddSource>(params),
        ClientMethod::ProjectRemoveSource => request::<ProjectRemoveSource>(params),
        ClientMethod::ProjectRelink => request::<ProjectRelink>(params),
        ClientMethod::ProjectTrust => request::<ProjectTrust>(params),
        ClientMethod::ProjectUpdate => request::<ProjectUpdate>(params),
        ClientMethod::ProjectContext => request::<ProjectContext>(params),
        ClientMethod::ProjectRetrySource => request::<ProjectRetrySource>(params),
        ClientMethod::CalendarList => request::<CalendarList>(params),
        ClientMethod::CalendarEvents => request::<CalendarEvents>(params),
        ClientMethod::SearchQuery => request::<SearchQuery>(params),
        ClientMethod::AttachmentUpload => request::<AttachmentUpload>(params),
        ClientMethod::TrashList => request::<TrashList>(params),
        ClientMethod::TrashRestore => request::<TrashRestore>(params),
        ClientMethod::TrashEmpty => request::<TrashEmpty>(params),
        ClientMethod::SessionExport => request::<SessionExport>(params),
    }
}

/// The client's copy of the resource it subscribed to, once a snapshot arrived.
#[derive(Default)]
struct Client {
    mirror: Option<core::Mirror>,
}

impl Client {
    fn snapshot(&mut self, snapshot: wire::Snapshot) {
        if let Ok(snapshot) = core::Snapshot::try_from(snapshot) {
            self.mirror = Some(core::Mirror::new(snapshot));
        }
    }

    fn envelope(&mut self, envelope: wire::Envelope) {
        let Ok(envelope) = core::Envelope::try_from(envelope) else {
            return;
        };
        if let Some(mirror) = &mut self.mirror
            && envelope.resource == mirror.snapshot.resource
            && mirror.apply(&envelope).is_err()
        {
            // A gap: a real client takes a fresh snapshot.
            self.mirror = None;
        }
    }

    fn notification(&mut self, method: &str, params: &Value) {
        if method == EnvelopeNotified::NAME {
            if let Some(envelope) = read::<<EnvelopeNotified as NotificationMethod>::Params>(params)
            {
                self.envelope(envelope);
            }
        } else if method == Resynced::NAME {
            if let Some(resync) = read::<ResyncNotification>(params) {
                self.snapshot(resync.snapshot);
            }
        } else if method == SubscriptionEnded::NAME {
            std::hint::black_box(read::<SubscriptionEndedNotification>(params));
        }
    }

    fn response(&mut self, result: &Value) {
        match read::<SubscribeResponse>(result) {
            Some(SubscribeResponse::Snapshot { snapshot }) => self.snapshot(snapshot),
            Some(SubscribeResponse::Replay { envelopes, .. }) => {
                envelopes
                    .into_iter()
                    .for_each(|envelope| self.envelope(envelope));
            }
            None => {}
        }
        if let Some(resolved) = read::<ChatResolveResponse>(result) {
            std::hint::black_box(core::ChatState::try_from(resolved.chat).is_ok());
        }
        if let Some(page) = read::<SessionListResponse>(result) {
            for summary in page.sessions {
                std::hint::black_box(core::SessionSummary::try_from(summary).is_ok());
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut client = Client::default();
    for line in text.lines() {
        match Incoming::parse(line) {
            Ok(Incoming::Request { id, method, params }) => {
                let written = request_text(id.clone(), &method, &params).unwrap_or_else(|error| {
                    panic!("a request read from {line:?} does not write: {error}")
                });
                match Incoming::parse(&written) {
                    Ok(Incoming::Request {
                        id: again,
                        method: same,
                        ..
                    }) => {
                        assert_eq!(
                            (again, same),
                            (id, method.clone()),
                            "{written:?} from {line:?}"
                        );
                    }
                    other => panic!("{written:?}, written from {line:?}, reads as {other:?}"),
                }
                if let Some(method) = ClientMethod::from_name(&method) {
                    request_params(method, &params);
                }
            }
            Ok(Incoming::Notification { method, params }) => client.notification(&method, &params),
            Ok(Incoming::Response { result, .. }) => client.response(&result),
            Ok(Incoming::Error { id, error }) => {
                std::hint::black_box(error_text(id, error));
            }
            Err(error) => {
                std::hint::black_box(error_text(None, error));
            }
        }
    }
});
