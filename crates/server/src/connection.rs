//! One client connection, whatever carries it (WebSocket or stdio): requests in, one
//! ordered stream of responses and notifications out through a bounded queue, and the
//! connection's subscriptions with their resyncs.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use hearth_core::ResourceUri;
use hearth_host::{Resumed, Subscription, TurnWindow};
use hearth_protocol::{
    self as wire, ClientMethod, ErrorKind, Incoming, NotificationMethod, RequestId, ResyncReason,
    Resynced, RpcError, SubscribeParams, SubscribeResponse, SubscriptionEnded,
    SubscriptionEndedNotification, UnsubscribeParams, UnsubscribeResponse, error_text,
    notification_text, response_text,
};
use serde_json::Value;
use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinHandle;

use crate::access::{Principal, UserView};
use crate::backend::Shared;
use crate::dispatch::{self, parse_params};
use crate::edge::{host_error, internal, not_initialized};
use crate::fanout::{Frame, Lag, ResourceKey, Sink};
use crate::root_view::RootView;
use crate::writer::{Outgoing, write_frames};

/// Requests of one connection handled at the same time; later ones wait (and the
/// connection stops reading, which pushes back on the client).
const MAX_IN_FLIGHT: usize = 32;

/// A connection's state.
pub(crate) struct Connection {
    id: u64,
    shared: Arc<Shared>,
    /// Who the connection was authenticated as.
    caller: Principal,
    queue: mpsc::Sender<Frame>,
    lag: Arc<Lag>,
    initialized: AtomicBool,
    /// Each subscription with the turns its chat snapshots hold.
    subscriptions: Mutex<HashMap<ResourceKey, TurnWindow>>,
    in_flight: Arc<Semaphore>,
    resync: Mutex<Option<JoinHandle<()>>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Connection {
    /// Starts a connection writing to `outgoing`; returns it and its writer task, which
    /// ends when the connection is closed and everything queued is written (or the
    /// transport fails).
    pub fn start<O: Outgoing>(
        shared: Arc<Shared>,
        caller: Principal,
        outgoing: O,
    ) -> (Arc<Self>, JoinHandle<()>) {
        let (queue, receiver) = mpsc::channel(shared.queue_capacity.max(1));
        let lag = Arc::new(Lag::default());
        let connection = Arc::new(Self {
            id: shared.connection_id(),
            shared,
            caller,
            queue,
            lag: Arc::clone(&lag),
            initialized: AtomicBool::new(false),
            subscriptions: Mutex::new(HashMap::new()),
            in_flight: Arc::new(Semaphore::new(MAX_IN_FLIGHT)),
            resync: Mutex::new(None),
        });
        let writer = tokio::spawn(write_frames(receiver, outgoing, Arc::clone(&lag)));
        let resync = tokio::spawn(resync_loop(Arc::downgrade(&connection), lag));
        *lock(&connection.resync) = Some(resync);
        (connection, writer)
    }

    /// Handles one message from the client.
    pub async fn receive(self: &Arc<Self>, text: &str) {
        let (id, method, params) = match Incoming::parse(text) {
            Ok(Incoming::Request { id, method, params }) => (id, method, params),
            Ok(Incoming::Notification { method, .. }) => {
                tracing::debug!(%method, "ignoring a notification from the client");
                return;
            }
            Ok(Incoming::Response { .. } | Incoming::Error { .. }) => {
                tracing::debug!(
                    "ignoring a response from the client (the server sends no requests)"
                );
                return;
            }
            Err(error) => return self.send(error_text(None, error)).await,
        };
        let Some(method) = ClientMethod::from_name(&method) else {
            let error = RpcError::new(
                ErrorKind::MethodNotFound,
                format!("no method `{method}` (see the protocol schema for the list)"),
                false,
            );
            return self.send(error_text(Some(id), error)).await;
        };
        if method == ClientMethod::Initialize {
            let text = dispatch::call(&self.shared, &self.caller, method, id, params).await;
            self.initialized.store(true, Ordering::Release);
            return self.send(text).await;
        }
        if !self.initialized.load(Ordering::Acquire) {
            return self.send(error_text(Some(id), not_initialized())).await;
        }
        let Ok(permit) = Arc::clone(&self.in_flight).acquire_owned().await else {
            return;
        };
        let connection = Arc::clone(self);
        tokio::spawn(async move {
            let _permit = permit;
            match method {
                ClientMethod::Subscribe => connection.subscribe(id, params).await,
                ClientMethod::Unsubscribe => connection.unsubscribe(id, params).await,
                _ => {
                    let text =
                        dispatch::call(&connection.shared, &connection.caller, method, id, params)
                            .await;
                    connection.send(text).await;
                }
            }
        });
    }

    /// Answers a message that could not be read as a request.
    pub async fn receive_error(&self, error: RpcError) {
        self.send(error_text(None, error)).await;
    }

    /// Ends the connection's subscriptions. Frames already queued are still written.
    pub fn close(&self) {
        if let Some(resync) = lock(&self.resync).take() {
            resync.abort();
        }
        let subscriptions = std::mem::take(&mut *lock(&self.subscriptions));
        for resource in subscriptions.into_keys() {
            self.shared.fanout.leave(&resource, self.id);
        }
    }

    async fn send(&self, text: String) {
        self.enqueue(Frame::Text(text.into())).await;
    }

    async fn enqueue(&self, frame: Frame) {
        if self.queue.send(frame).await.is_err() {
            tracing::trace!(connection = self.id, "the connection's writer stopped");
        }
    }

    fn sink(&self) -> Sink {
        Sink {
            connection: self.id,
            queue: self.queue.clone(),
            lag: Arc::clone(&self.lag),
        }
    }

    async fn subscribe(&self, id: RequestId, params: Value) {
        let params: SubscribeParams = match parse_params(params) {
            Ok(params) => params,
            Err(error) => return self.send(error_text(Some(id), error)).await,
        };
        let resource = match dispatch::parse_field("resource", &params.resource, ResourceUri::parse)
        {
            Ok(resource) => Arc::new(resource),
            Err(error) => return self.send(error_text(Some(id), error)).await,
        };
        if let Err(error) = self.may_follow(&resource).await {
            return self.send(error_text(Some(id), error)).await;
        }
        // A user's view of the root is numbered for them: a seq of theirs means nothing
        // to the host, so they get a fresh (empty) snapshot.
        let params = SubscribeParams {
            last_seq: params
                .last_seq
                .filter(|_| self.root_view_of(&resource).is_none()),
            ..params
        };
        self.enqueue(Frame::Stage(Arc::clone(&resource))).await;
        if let Err(error) = self.shared.fanout.join(&resource, self.sink()).await {
            return self.fail_open(&resource, id, host_error(&error)).await;
        }
        let window = params
            .turn_limit
            .map_or(TurnWindow::All, TurnWindow::Latest);
        lock(&self.subscriptions).insert(Arc::clone(&resource), window);
        let opened = self.open_state(&resource, &params, window).await;
        let (floor, response) = match opened {
            Ok(opened) => opened,
            Err(error) => {
                self.forget(&resource);
                return self.fail_open(&resource, id, host_error(&error)).await;
            }
        };
        let view = match self.view(&resource, floor).await {
            Ok(view) => view,
            Err(error) => {
                self.forget(&resource);
                return self.fail_open(&resource, id, error).await;
            }
        };
        let text = response_text(id.clone(), &response)
            .unwrap_or_else(|error| error_text(Some(id), internal(error)));
        self.enqueue(Frame::Open {
            resource,
            floor,
            text: text.into(),
            view,
        })
        .await;
    }

    /// The subscription's first answer: the envelopes missed since `lastSeq` when the
    /// host still has them, else a snapshot; with the seq it reflects.
    async fn open_state(
        &self,
        resource: &ResourceUri,
        params: &SubscribeParams,
        window: TurnWindow,
    ) -> hearth_host::HostResult<(u64, SubscribeResponse)> {
        let host = self.shared.host();
        match params.last_seq {
            Some(last_seq) => host
                .resume_window(resource, last_seq, window)
                .await
                .map(|resumed| match resumed {
                    Resumed::Replay { missed, .. } => {
                        let floor = missed.last().map_or(last_seq, |envelope| envelope.seq);
                        let response = SubscribeResponse::Replay {
                            resource: params.resource.clone(),
                            envelopes: missed.into_iter().map(Into::into).collect(),
                        };
                        (floor, response)
                    }
                    Resumed::Snapshot(subscription) => {
                        let (floor, snapshot) = wire_snapshot(*subscription);
                        (floor, SubscribeResponse::Snapshot { snapshot })
                    }
                }),
            None => host
                .subscribe_window(resource, window)
                .await
                .map(|subscription| {
                    let (floor, snapshot) = wire_snapshot(subscription);
                    (floor, SubscribeResponse::Snapshot { snapshot })
                }),
        }
    }

    /// Whether the caller may follow the resource: a user, a session or chat they may
    /// reach, or the root (through their view).
    async fn may_follow(&self, resource: &ResourceUri) -> Result<(), RpcError> {
        let Principal::User(user) = &self.caller else {
            return Ok(());
        };
        match resource {
            ResourceUri::Root => Ok(()),
            ResourceUri::Session(session) => {
                crate::access::see_session(&self.shared, user, session).await
            }
            ResourceUri::Chat(chat) => crate::access::see_chat(&self.shared, user, chat).await,
        }
    }

    /// The user whose view of the root this subscription is, if it is one.
    fn root_view_of(&self, resource: &ResourceUri) -> Option<&Arc<UserView>> {
        match (&self.caller, resource) {
            (Principal::User(user), ResourceUri::Root) => Some(user),
            _ => None,
        }
    }

    /// A user's view of the root, continuing after the snapshot at `floor`: it knows the
    /// sessions `session/list` shows them.
    async fn view(
        &self,
        resource: &ResourceUri,
        floor: u64,
    ) -> Result<Option<Box<RootView>>, RpcError> {
        if matches!(
            (&self.caller, resource),
            (Principal::Operator, ResourceUri::Root)
        ) && self.shared.backend.accounts.is_some()
        {
            return Ok(Some(Box::new(RootView::operator(floor))));
        }
        let Some(user) = self.root_view_of(resource) else {
            return Ok(None);
        };
        let shown = crate::access::visible_sessions(&self.shared, user).await?;
        Ok(Some(Box::new(RootView::new(
            Arc::clone(user),
            shown,
            floor,
        ))))
    }

    async fn fail_open(&self, resource: &ResourceKey, id: RequestId, error: RpcError) {
        self.enqueue(Frame::Close {
            resource: Arc::clone(resource),
            text: error_text(Some(id), error).into(),
        })
        .await;
    }

    fn forget(&self, resource: &ResourceKey) -> bool {
        let known = lock(&self.subscriptions).remove(resource).is_some();
        self.shared.fanout.leave(resource, self.id);
        known
    }

    async fn unsubscribe(&self, id: RequestId, params: Value) {
        let params: UnsubscribeParams = match parse_params(params) {
            Ok(params) => params,
            Err(error) => return self.send(error_text(Some(id), error)).await,
        };
        let resource = match dispatch::parse_field("resource", &params.resource, ResourceUri::parse)
        {
            Ok(resource) => Arc::new(resource),
            Err(error) => return self.send(error_text(Some(id), error)).await,
        };
        let unsubscribed = self.forget(&resource);
        let response = UnsubscribeResponse { unsubscribed };
        let text = response_text(id.clone(), &response)
            .unwrap_or_else(|error| error_text(Some(id), internal(error)));
        self.enqueue(Frame::Close {
            resource,
            text: text.into(),
        })
        .await;
    }

    /// Gives a fallen-behind subscription a fresh snapshot, or ends it when the resource
    /// is gone.
    async fn resync(&self, resource: ResourceKey) {
        let Some(window) = lock(&self.subscriptions).get(&resource).copied() else {
            return;
        };
        self.enqueue(Frame::Stage(Arc::clone(&resource))).await;
        let host = self.shared.host();
        let subscription = match self.shared.fanout.join(&resource, self.sink()).await {
            Ok(()) => host.subscribe_window(&resource, window).await,
            Err(error) => Err(error),
        };
        let frame = match subscription {
            Ok(subscription) => {
                let (floor, snapshot) = wire_snapshot(subscription);
                let view = match self.view(&resource, floor).await {
                    Ok(view) => view,
                    Err(error) => {
                        tracing::warn!(%error, "cannot resync a user's view of the root");
                        self.forget(&resource);
                        return;
                    }
                };
                let notification = wire::ResyncNotification {
                    snapshot,
                    reason: ResyncReason::Lagged,
                };
                match notification_text(Resynced::NAME, &notification) {
                    Ok(text) => Frame::Open {
                        resource,
                        floor,
                        text: text.into(),
                        view,
                    },
                    Err(error) => {
                        tracing::error!(%error, "cannot encode a resync");
                        self.forget(&resource);
                        return;
                    }
                }
            }
            Err(error) => {
                self.forget(&resource);
                let ended = SubscriptionEndedNotification {
                    resource: resource.to_string(),
                    reason: error.to_string(),
                };
                let text = notification_text(SubscriptionEnded::NAME, &ended)
                    .unwrap_or_else(|_| error_text(None, internal("cannot encode")));
                Frame::Close {
                    resource,
                    text: text.into(),
                }
            }
        };
        self.enqueue(frame).await;
    }
}

/// A subscription's snapshot on the wire, with its seq (the floor of the envelopes that
/// follow); a chat's says whether it left out earlier turns.
fn wire_snapshot(subscription: Subscription) -> (u64, wire::Snapshot) {
    let floor = subscription.snapshot.seq;
    let mut snapshot = wire::Snapshot::from(subscription.snapshot);
    if let wire::ResourceState::Chat(chat) = &mut snapshot.state {
        chat.older_turns = subscription.older_turns;
    }
    (floor, snapshot)
}

async fn resync_loop(connection: Weak<Connection>, lag: Arc<Lag>) {
    loop {
        let resources = lag.next().await;
        let Some(connection) = connection.upgrade() else {
            return;
        };
        for resource in resources {
            tracing::debug!(connection = connection.id, %resource, "resyncing a subscriber that fell behind");
            connection.resync(resource).await;
        }
    }
}
