// Hearth's wire types for Agent Home, generated from schema/hearth-protocol.json.
// Do not edit: regenerate with the schema.

/** A state change. Each applies to one kind of resource; clients fold them in with the
 * same reducer as the host. */
export type Action = ({
    /** The session. */
    summary: SessionSummary;
    type: 'sessionAdded';
  } | {
    /** The new summary. */
    summary: SessionSummary;
    type: 'sessionUpdated';
  } | {
    /** The session. */
    session: string;
    type: 'sessionRemoved';
  } | {
    /** The chat. */
    chat: ChatSummary;
    type: 'chatAdded';
  } | {
    /** The new summary. */
    chat: ChatSummary;
    type: 'chatUpdated';
  } | {
    /** The chat. */
    chat: string;
    type: 'chatRemoved';
  } | {
    /** The chat. */
    chat: string;
    /** Whether a turn runs. */
    running: boolean;
    type: 'chatActivity';
  } | {
    /** The turn as it starts. */
    turn: Turn;
    type: 'turnStarted';
  } | {
    /** The text. */
    text: string;
    /** The turn. */
    turnId: string;
    type: 'textDelta';
  } | {
    /** The text. */
    text: string;
    /** The turn. */
    turnId: string;
    type: 'reasoningDelta';
  } | {
    /** The call. */
    call: ToolCallPart;
    /** The turn. */
    turnId: string;
    type: 'toolCallStarted';
  } | {
    /** Call id. */
    callId: string;
    /** Changed details (title, kind, locations, content, arguments). */
    patch?: ToolCallPatch;
    /** Result, when finished. */
    result?: (ToolResult | null);
    /** New status. */
    status: ToolCallStatus;
    /** The turn. */
    turnId: string;
    type: 'toolCallUpdated';
  } | {
    /** The whole plan. */
    entries: Array<PlanEntry>;
    /** The turn. */
    turnId: string;
    type: 'planUpdated';
  } | {
    /** The part. */
    part: ResponsePart;
    /** The turn. */
    turnId: string;
    type: 'partAdded';
  } | {
    /** The chosen option. */
    outcome: string;
    /** The request. */
    requestId: string;
    /** The turn. */
    turnId: string;
    type: 'permissionResolved';
  } | {
    /** The turn. */
    turnId: string;
    type: 'usageUpdated';
    /** Usage. */
    usage: Usage;
  } | {
    /** When. */
    completedAt: string;
    /** Why. */
    stopReason: StopReason;
    /** The turn. */
    turnId: string;
    type: 'turnCompleted';
    /** Final usage. */
    usage?: (Usage | null);
  } | {
    /** The whole new state. */
    state: AgentChatState;
    type: 'agentStateChanged';
  } | {
    /** The draft; absent clears it. */
    draft?: string | null;
    type: 'draftChanged';
  } | {
    /** The whole queue, in sending order. */
    queued?: Array<UserMessage>;
    type: 'queueChanged';
  } | {
    /** The proposal's id. */
    proposalId: string;
    type: 'proposalChanged';
  } | {
    /** Every harness, by id. */
    harnesses: Array<HarnessInfo>;
    type: 'harnessesChanged';
  });

/** What an agent reports about a chat besides its turns. */
export type AgentChatState = {
  /** Commands the agent offers. */
  commands?: Array<AvailableCommand>;
  /** The models the chat can use. */
  models?: (ChoiceState | null);
  /** The agent's modes. */
  modes?: (ChoiceState | null);
};

/** `agent/connect`: a team server user's own sign-in for one of the server's external
 * agents, as the variables the agent reads it from (`ANTHROPIC_API_KEY` for Claude
 * Code). The agent then also runs as a harness of theirs (`<user id>_<agent>`), with
 * those variables and a home folder of their own, and never with the server's
 * credentials. */
export type AgentConnectParams = {
  /** The server's external agent (`claude-code`). */
  agent: string;
  /** Variables to run it with: names of capital letters, digits and `_`. */
  env: { [key: string]: string };
};

/** What `agent/connect` returns. */
export type AgentConnectResponse = {
  /** The user's own harness of the agent. */
  harness: string;
};

/** `agent/disconnect`: forgets a user's own variables for an agent; their harness of it
 * goes. */
export type AgentDisconnectParams = {
  /** The server's external agent. */
  agent: string;
};

/** What `agent/disconnect` returns. */
export type AgentDisconnectResponse = {
  /** The harness that went. */
  harness: string;
};

/** A file attached to a user message. */
export type Attachment = {
  /** MIME type. */
  mediaType: string;
  /** Display name. */
  name: string;
  /** Where the content lives (a path or URL). */
  uri: string;
};

/** `attachment/upload`: keeps a file in the data directory, for a message's attachments
 * (`chat/send`, `chat/queue`) or a project's sources (`project/addSource`). */
export type AttachmentUploadParams = {
  /** The content, base64 (standard alphabet, padded). Limited by `attachment_bytes`
   * under `[limits]`. */
  data: string;
  /** MIME type (`application/octet-stream` when unknown). */
  mediaType: string;
  /** The file's name (a path in it is dropped: only the last part is kept). */
  name: string;
};

/** What `attachment/upload` returns. */
export type AttachmentUploadResponse = {
  /** The attachment to send with a message; its `uri` is the kept file's path. */
  attachment: Attachment;
  /** The content's size in bytes. */
  bytes: number;
};

/** One row of the append-only, hash-chained audit log (secrets redacted). */
export type AuditEntry = {
  /** Who: an agent's chat URI, `user` or `hearth`. */
  actor: string;
  /** SHA-256 of the arguments or payload. */
  argumentHash?: string | null;
  /** What was decided. */
  decision: string;
  /** More, redacted. */
  detail?: unknown;
  /** This row's hash. */
  hash: string;
  /** What kind of event (`tool_call`, `proposal`, `permission`, …). */
  kind: string;
  /** How it ended (`ok`, `ok: …`, `error: …`). */
  outcome: string;
  /** The previous row's hash. */
  prevHash: string;
  /** The proposal. */
  proposalId?: string | null;
  /** When it happened. */
  recordedAt: string;
  /** Position in the chain, from 1. */
  seq: number;
  /** The tool. */
  tool?: string | null;
};

/** `audit/list`: a page of the audit log, newest first. */
export type AuditListParams = {
  /** Only rows of this actor (`user`, `hearth`, a chat URI). */
  actor?: string | null;
  /** Continue after this cursor (a previous page's `nextCursor`). */
  cursor?: string | null;
  /** Page size, 1 to 1000 (default 50). */
  limit?: number | null;
  /** Only rows about this tool. */
  tool?: string | null;
};

/** What `audit/list` returns. */
export type AuditListResponse = {
  /** The entries, newest first. */
  entries: Array<AuditEntry>;
  /** Pass as `cursor` for the next page; absent on the last page. */
  nextCursor?: string | null;
};

/** `audit/verify`: checks the audit log as `hearth audit verify` does — the hash chain,
 * the key, the head file, a head the user kept, and that every applied proposal has its
 * entry. */
export type AuditVerifyParams = {
  /** A head an earlier verify returned (`SEQ:HASH`), kept where Hearth cannot write:
   * the log must still hold it. */
  head?: string | null;
};

/** What `audit/verify` returns. */
export type AuditVerifyResponse = {
  /** Entries checked (up to and including the first broken one). */
  entries: number;
  /** The newest entry as `SEQ:HASH`, when every check passed and the log has entries:
   * keep it somewhere Hearth cannot write and pass it to a later verify. */
  head?: string | null;
  /** Every check passed. */
  ok: boolean;
  /** What is wrong, where, and what it means, when a check failed. */
  problem?: string | null;
};

/** A command an agent offers in a chat (typed as `/name`). */
export type AvailableCommand = {
  /** What it does. */
  description: string;
  /** A hint for its input. */
  inputHint?: string | null;
  /** The command's name, without the slash. */
  name: string;
};

/** One calendar. */
export type CalendarEntry = {
  /** A display color, when the configuration gives one. */
  color?: string | null;
  /** Whether new events go here by default. */
  default: boolean;
  /** Why it cannot be read at all (a missing or unreadable file), and what to do. */
  error?: string | null;
  /** Its id (the `[calendars.<id>]` key). */
  id: string;
  /** The storage behind it. */
  kind: CalendarKind;
  /** Display name. */
  name: string;
  /** Whether agents may not stage changes to it. */
  readOnly: boolean;
  /** When a CalDAV calendar last synced with its server (RFC 3339): its events are
   * as of then. */
  syncedAt?: string | null;
  /** Problems with single items or the configuration; the rest of it is read. */
  warnings: Array<string>;
};

/** One occurrence of an event. */
export type CalendarEvent = {
  /** Whether it lasts whole days. */
  allDay: boolean;
  /** Its calendar's id. */
  calendar: string;
  /** Same form; for an all-day event the day after its last (exclusive). */
  end: string;
  /** Location. */
  location?: string | null;
  /** Names this occurrence of a repeating event (a date, or a date and wall-clock time
   * in the calendar zone), as the calendar tools take it. */
  recurrenceId?: string | null;
  /** RFC 3339 with the offset of the calendar zone (`2026-12-01T09:00:00+01:00`), or
   * `YYYY-MM-DD` for an all-day event. */
  start: string;
  /** Title. */
  title: string;
  /** The event's UID. */
  uid: string;
};

/** `calendar/events`: the events of a window, repeating events expanded, and the pending
 * calendar proposals that touch it. */
export type CalendarEventsParams = {
  /** Only these calendar ids (default: all). */
  calendars?: Array<string> | null;
  /** Start (inclusive): a date (`2026-12-01`, midnight in the calendar zone) or an
   * RFC 3339 date-time. */
  from: string;
  /** End (exclusive), same forms; at most 400 days after `from`. */
  to: string;
};

/** What `calendar/events` returns. */
export type CalendarEventsResponse = {
  /** The occurrences in the window, by start. */
  events: Array<CalendarEvent>;
  /** Pending proposals as the events they would create, move (the new time) or delete
   * (the current time), when those fall in the window. */
  proposed: Array<ProposedEvent>;
  /** What could not be read or shown (a calendar, a proposal), and why. */
  warnings: Array<string>;
};

/** The storage behind a calendar. */
export type CalendarKind = ('ics' | 'notes' | 'subscription' | 'caldav');

/** `calendar/list` params. */
export type CalendarListParams = { [key: string]: unknown };

/** What `calendar/list` returns. */
export type CalendarListResponse = {
  /** The configured calendars (plus Hearth's default one when none is a writable
   * default), and those configured but unusable, with their `error`. */
  calendars: Array<CalendarEntry>;
  /** Whether the user wants a 12-hour clock (`[defaults] clock = "12h"`). */
  hour12: boolean;
  /** The IANA zone times are shown in: `[defaults] time_zone`, else the system's. */
  timezone: string;
};

/** Optional abilities of a harness. UIs gate actions on these, never on a provider id. */
export type Capabilities = {
  /** Peer chats, fork, side chats. */
  multipleChats?: (MultipleChats | null);
  /** Several working directories. */
  multipleWorkingDirectories?: (MultipleWorkingDirectories | null);
};

/** What `chat/abort` returns. */
export type ChatAbortResponse = {
  /** Whether a turn was running. */
  aborted: boolean;
};

/** What `chat/compact` returns. */
export type ChatCompactResponse = {
  /** How many of them this call summarised (0: there was nothing new to summarise). */
  summarised: number;
  /** The summary the agent reads instead of those turns. */
  summary: string;
  /** How many of the chat's turns its summary stands for now (0: it has none). */
  turns: number;
};

/** `chat/create`: adds a peer chat to a session (needs `multipleChats`). */
export type ChatCreateParams = {
  /** How it starts (default: fresh). */
  seed?: ChatSeed;
  /** The session. */
  session: string;
};

/** What `chat/create` returns. */
export type ChatCreateResponse = {
  /** The new chat. */
  chat: ChatSummary;
};

/** What `chat/dispose` returns. */
export type ChatDisposeResponse = { [key: string]: unknown };

/** A chat in its session's catalog, with whether it runs a turn. */
export type ChatListing = {
  /** Whether a turn runs in it. */
  running?: boolean;
  /** The chat. */
  summary: ChatSummary;
};

/** How a chat came into existence. */
export type ChatOrigin = ({
    type: 'user';
  } | {
    /** The chat forked from (`hearth-chat:…`). */
    sourceChat: string;
    /** The last turn copied. */
    turnId: string;
    type: 'fork';
  } | {
    /** The chat it hangs off (`hearth-chat:…`). */
    sourceChat: string;
    /** The turn whose context it sees. */
    turnId: string;
    type: 'sideChat';
  } | {
    /** The chat whose tool call spawned it (`hearth-chat:…`). */
    parentChat: string;
    /** The spawning tool call. */
    toolCallId: string;
    type: 'tool';
  });

/** Addresses one chat: the params of `chat/dispose`, `chat/abort` and `chat/resolve`. */
export type ChatParams = {
  /** The chat. */
  chat: string;
};

/** `chat/queue`: sends a message now when the chat is idle, or queues it behind the
 * running turn; queued messages are kept with the chat and sent one per turn, in order,
 * as each turn ends by itself (after Stop or a failure the queue waits). */
export type ChatQueueParams = {
  /** The chat. */
  chat: string;
  /** The message. */
  message: UserMessage;
};

/** What `chat/queue` returns. */
export type ChatQueueResponse = {
  /** The turn it started, when the chat was idle; absent when it was queued. */
  turnId?: string | null;
};

/** What `chat/resolve` returns. */
export type ChatResolveResponse = {
  /** The chat with its turns. */
  chat: ChatState;
};

/** How a new chat starts. */
export type ChatSeed = ({
    type: 'fresh';
  } | {
    /** The chat forked from. */
    sourceChat: string;
    /** The last turn copied. */
    turnId: string;
    type: 'fork';
  } | {
    /** The chat it hangs off. */
    sourceChat: string;
    /** The turn whose context it sees. */
    turnId: string;
    type: 'sideChat';
  });

/** `chat/send`: starts a turn. The user's message is stored before the response;
 * progress arrives as envelopes on the chat's subscription. */
export type ChatSendParams = {
  /** The chat. */
  chat: string;
  /** What the user sends. */
  message: UserMessage;
};

/** What `chat/send` returns. */
export type ChatSendResponse = {
  /** The new turn. */
  turnId: string;
};

/** `chat/setDraft`: stores the chat's unsent draft. */
export type ChatSetDraftParams = {
  /** The chat. */
  chat: string;
  /** The draft; absent clears it. */
  draft?: string | null;
};

/** What `chat/setDraft` returns. */
export type ChatSetDraftResponse = { [key: string]: unknown };

/** `chat/setMode`: the mode the chat's next turns use (one of the agent's modes, listed
 * in the chat's agent state). */
export type ChatSetModeParams = {
  /** The chat. */
  chat: string;
  /** The mode's id. */
  mode: string;
};

/** What `chat/setMode` returns. */
export type ChatSetModeResponse = { [key: string]: unknown };

/** `chat/setModel`: the model the chat's next turns use. */
export type ChatSetModelParams = {
  /** The chat. */
  chat: string;
  /** The model. */
  model: string;
};

/** What `chat/setModel` returns. */
export type ChatSetModelResponse = { [key: string]: unknown };

/** `chat/setQueue`: replaces a chat's queue (a message removed or reordered). */
export type ChatSetQueueParams = {
  /** The chat. */
  chat: string;
  /** The whole queue, in sending order (each message with its attachments). */
  queued: Array<UserMessage>;
};

/** What `chat/setQueue` returns. */
export type ChatSetQueueResponse = { [key: string]: unknown };

/** A chat with its turns. */
export type ChatState = {
  /** What the agent offers in the chat (commands, modes, models), once it said. */
  agent?: (AgentChatState | null);
  /** The unsent draft. */
  draft?: string | null;
  /** The chat has turns before the first of `turns` (a snapshot asked for with
   * `turnLimit`): read them with `chat/turns`. */
  olderTurns?: boolean;
  /** Messages waiting for the running turn, with their attachments, sent one per turn
   * in order (`chat/queue`). */
  queued?: Array<UserMessage>;
  /** The chat. */
  summary: ChatSummary;
  /** Its turns, oldest first. */
  turns: Array<Turn>;
};

/** A chat as its session's catalog lists it. */
export type ChatSummary = {
  /** When it was created. */
  createdAt: string;
  /** The model, when chosen. */
  model?: string | null;
  /** How it came to exist. */
  origin: ChatOrigin;
  /** Display title. */
  title?: string | null;
  /** When it last changed. */
  updatedAt: string;
  /** The chat (`hearth-chat:<provider>/<session-id>/<chat-id>`). */
  uri: string;
};

/** `chat/turns`: a page of a chat's turns, for showing a long chat from its end and
 * reading back as the user scrolls. Costs the page, not the chat's length; a chat that
 * is not loaded is not restored for it. */
export type ChatTurnsParams = {
  /** The page ends just before this turn (the first turn of the page the client has);
   * absent: the page ends with the newest turn. */
  before?: string | null;
  /** The chat. */
  chat: string;
  /** Page size, 1 to 200 (default 50). */
  limit?: number | null;
};

/** What `chat/turns` returns. */
export type ChatTurnsResponse = {
  /** Whether the chat has turns before the first of these (ask again with `before`
   * set to its id). */
  hasMore: boolean;
  /** The turns, oldest first. */
  turns: Array<Turn>;
};

/** One value of a choice (a mode, a model). */
export type Choice = {
  /** One line about it. */
  description?: string | null;
  /** The value's id. */
  id: string;
  /** Display name. */
  name: string;
};

/** A setting with its current value and the values it can take. */
export type ChoiceState = {
  /** The values. */
  choices: Array<Choice>;
  /** The current value's id. */
  current: string;
};

/** Who the client is. */
export type ClientInfo = {
  /** Program name (`hearth-cli`, `hearth-web`, an editor). */
  name: string;
  /** Program version. */
  version?: string | null;
};

/** A reference to context the user included. */
export type ContextReference = {
  /** Display label. */
  label: string;
  /** What it points at. */
  uri: string;
};

/** An amount spent, in a currency (ISO 4217, e.g. `USD`) or another unit (`credits`). */
export type Cost = {
  /** The amount. */
  amount: number;
  /** Its unit. */
  currency: string;
};

/** An action addressed to a resource, numbered per resource: the params of the
 * `subscription/envelope` notification. */
export type Envelope = {
  /** What changed. */
  action: Action;
  /** The resource (`hearth-root:`, `hearth-session:…` or `hearth-chat:…`). */
  resource: string;
  /** Sequence number within the resource, starting at 1, without gaps. */
  seq: number;
};

/** The structured part of an error response. */
export type ErrorData = {
  /** The class of failure. */
  kind: ErrorKind;
  /** What failed, on what, and what to do (the same text as the error's message). */
  message: string;
  /** Whether sending the same request again may succeed. */
  retryable: boolean;
};

/** What kind of failure an error response reports. Clients branch on this, never on the
 * message text. */
export type ErrorKind = ('parseError' | 'invalidRequest' | 'methodNotFound' | 'invalidParams' | 'notInitialized' | 'notFound' | 'gone' | 'unsupported' | 'busy' | 'conflict' | 'provider' | 'unavailable' | 'shuttingDown' | 'forbidden' | 'internal');

/** The format of an exported session. */
export type ExportFormat = ('markdown' | 'jsonl');

/** A harness the server offers. */
export type HarnessInfo = {
  /** Optional abilities. */
  capabilities: Capabilities;
  /** Whether it is a demo that produces scripted answers. */
  demo?: boolean;
  /** One line about it. */
  description: string;
  /** Provider id: the first segment of every session URI it owns. */
  id: string;
  /** Display name. */
  name: string;
};

/** `harness/start`: starts a harness now (an external agent's process) so the
 * conversations in its own catalog are listed as external sessions. */
export type HarnessStartParams = {
  /** The harness's id (`provider`, its older name, is read too). */
  harness: string;
};

/** What `harness/start` returns. */
export type HarnessStartResponse = {
  /** The harness as it describes itself once started. */
  harness: HarnessInfo;
};

/** `initialize`: the first request of every connection. */
export type InitializeParams = {
  /** Who the client is. */
  clientInfo: ClientInfo;
  /** The protocol version the client speaks; the server answers with its own. */
  protocolVersion?: string | null;
};

/** What `initialize` returns. */
export type InitializeResponse = {
  /** The harness `session/create` uses when none is named (absent from a server that
   * predates the name: see `defaultProvider`). */
  defaultHarness?: string | null;
  /** Deprecated: the same as `defaultHarness`, still sent for clients written before
   * the rename. */
  defaultProvider?: string | null;
  /** Optional parts on offer. */
  features: ServerFeatures;
  /** The harnesses sessions can be created with, with their capabilities. */
  harnesses: Array<HarnessInfo>;
  /** The protocol version the server speaks. */
  protocolVersion: string;
  /** Who the server is. */
  serverInfo: ServerInfo;
};

/** Whether a provider has its API key (never the key itself). */
export type KeyState = ({
    /** Where (`OPENAI_API_KEY`, `config.toml api_key`). */
    from: string;
    type: 'found';
  } | {
    /** The variable to set. */
    expected: string;
    type: 'missing';
  } | {
    type: 'notNeeded';
  });

/** Peer chats and what a harness can do with them. Present means peer chats work. */
export type MultipleChats = {
  /** Chats can be forked at a turn. */
  fork: boolean;
  /** Side chats can be opened at a turn. */
  sideChat: boolean;
};

/** Several working directories per session. */
export type MultipleWorkingDirectories = {
  /** Index 0 stays the fixed process root. */
  immutablePrimary: boolean;
};

/** A permission request nobody answered yet. */
export type PendingPermission = {
  /** The chat whose running turn asks. */
  chat: string;
  /** The choices. */
  options: Array<PermissionOption>;
  /** The request (answer it with `permission/respond`). */
  requestId: string;
  /** What is asked. */
  title: string;
  /** The tool call it is about (its kind, files and diff), when the agent linked one. */
  toolCall?: (ToolCallPart | null);
  /** The turn. */
  turnId: string;
};

/** A standing answer for the rest of a chat, covering exactly the call it was given for. */
export type PermissionGrant = {
  /** Allowed (`true`) or refused (`false`). */
  allowed: boolean;
  /** The chat it holds in. */
  chat: string;
  /** Its id (revoke it with `permission/revokeGrant`). */
  id: string;
  /** What it covers, in words (`edit of /work/a.md`, `` execute of `make test` ``). */
  scope: string;
};

/** `permission/grants`: the standing answers ("allow for this chat") the harnesses hold. */
export type PermissionGrantsParams = { [key: string]: unknown };

/** What `permission/grants` returns. */
export type PermissionGrantsResponse = {
  /** The grants, by chat. */
  grants: Array<PermissionGrant>;
};

/** `permission/list`: the permission requests nobody answered yet. */
export type PermissionListParams = { [key: string]: unknown };

/** What `permission/list` returns. */
export type PermissionListResponse = {
  /** The requests, grouped by chat. */
  permissions: Array<PendingPermission>;
};

/** One choice a permission request offers. */
export type PermissionOption = {
  /** Option id, sent back in `permission/respond`. */
  id: string;
  /** What choosing it means, when the agent says. */
  kind?: (PermissionOptionKind | null);
  /** Label shown to the user. */
  label: string;
};

/** What choosing a permission option means. */
export type PermissionOptionKind = ('allowOnce' | 'allowAlways' | 'rejectOnce' | 'rejectAlways');

/** `permission/respond`: answers a permission request of a chat's running turn. */
export type PermissionRespondParams = {
  /** The answer is Hearth's refusal because nobody could be asked (a client with no
   * one at its terminal), not a person's choice: the model is told so, and the audit
   * log records it as Hearth's. */
  byPolicy?: boolean;
  /** The chat. */
  chat: string;
  /** The chosen option's id. */
  optionId: string;
  /** The request. */
  requestId: string;
};

/** What `permission/respond` returns. */
export type PermissionRespondResponse = { [key: string]: unknown };

/** `permission/revokeGrant`: ends a standing answer; the next such call asks again. */
export type PermissionRevokeGrantParams = {
  /** The grant's id. */
  grant: string;
};

/** What `permission/revokeGrant` returns. */
export type PermissionRevokeGrantResponse = {
  /** Whether a grant of that id was held (and is now gone). */
  revoked: boolean;
};

/** One item of a plan or todo list. */
export type PlanEntry = {
  /** What is to be done. */
  content: string;
  /** How far along it is. */
  status: PlanStatus;
};

/** State of a plan entry. */
export type PlanStatus = ('pending' | 'inProgress' | 'completed');

/** A project. */
export type Project = {
  /** The agent its new sessions use by default. */
  agent?: string | null;
  /** When it was registered. */
  createdAt: string;
  /** A line about it. */
  description?: string | null;
  /** The folder holding its `project.md`: its sessions' working directory. */
  folder: string;
  /** Its id (in its `project.md`; survives the folder moving). */
  id: string;
  /** Its instructions (the body of `project.md`). */
  instructions?: string;
  /** The model its new sessions use by default. */
  model?: string | null;
  /** Its name. */
  name: string;
  /** Why it cannot, when it cannot. */
  problem?: string | null;
  /** The provider its new sessions use by default. */
  provider?: string | null;
  /** What to show the user before it takes new turns, when its state is
   * `needsTrust`. */
  review?: (ProjectReview | null);
  /** Its context sources. */
  sources?: Array<ProjectSource>;
  /** Whether it can take new sessions. */
  state: ProjectState;
  /** When its folder or name last changed. */
  updatedAt: string;
};

/** `project/addSource` params. */
export type ProjectAddSourceParams = {
  /** Its id, name, or the start of its id. */
  project: string;
  /** A URL, YouTube link, file, folder or pattern (relative paths are taken from the
   * project's folder). */
  source: string;
};

/** `project/context` params. */
export type ProjectContextParams = {
  /** Its id, name, or the start of its id. */
  project: string;
  /** Answer once the preparation under way (if any) has ended, instead of at once. */
  wait?: boolean;
};

/** `project/context` and `project/retrySource` result: where a trusted project's
 * context sources stand. Sources not prepared yet start preparing when this is
 * asked. */
export type ProjectContextResponse = {
  /** How many sources failed. */
  failed: number;
  /** Whether some source is being prepared now. */
  materializing: boolean;
  /** The project's id. */
  projectId: string;
  /** Each source, in the project's order. */
  sources: Array<ProjectSourceStatus>;
};

/** `project/create` params. */
export type ProjectCreateParams = {
  /** A line about it. */
  description?: string | null;
  /** Its folder (absolute); created when missing. A folder that already holds a
   * `project.md` is adopted, once the user trusts it (`trust`). */
  folder: string;
  /** Its name. */
  name: string;
  /** With `trust`: the `digest` of the review the user saw; the adoption fails with a
   * `conflict` error if the file gives anything else now. */
  reviewDigest?: string | null;
  /** The user trusts the folder's existing `project.md` (what its review shows): adopt
   * it. Without it, a folder holding a `project.md` answers `needsTrust`. A folder
   * without one needs no trust. */
  trust?: boolean;
};

/** `project/create` result. */
export type ProjectCreateResponse = ({
    /** Whether the folder's existing `project.md` was adopted. */
    adopted: boolean;
    /** The project now. */
    project: Project;
    type: 'created';
  } | {
    /** What the file gives its agents. */
    review: ProjectReview;
    type: 'needsTrust';
  });

/** `project/delete` result. */
export type ProjectDeleteResponse = {
  /** The deleted project's id. */
  id: string;
  /** Whether Hearth's `AGENTS.md` mirror was removed from its folder. */
  mirrorRemoved: boolean;
};

/** `project/list` params. */
export type ProjectListParams = { [key: string]: unknown };

/** `project/list` result. */
export type ProjectListResponse = {
  /** Every project, by name. */
  projects: Array<Project>;
};

/** A source of a project's file that reaches outside its folder. */
export type ProjectOutsideSource = {
  /** `file`, `folder` or `glob`. */
  kind: string;
  /** Where it leads, links followed: the folder or file; for a pattern, the pattern
   * when its folder is outside, else each matching file outside. */
  reaches: Array<string>;
  /** Its path or pattern, as the file gives it. */
  target: string;
};

/** Params naming one project. */
export type ProjectParams = {
  /** Its id, name, or the start of its id. */
  project: string;
};

/** `project/relink` params. */
export type ProjectRelinkParams = {
  /** The folder (absolute) now holding its `project.md`. */
  folder: string;
  /** Its id, name, or the start of its id. */
  project: string;
};

/** `project/removeSource` params. */
export type ProjectRemoveSourceParams = {
  /** Its id, name, or the start of its id. */
  project: string;
  /** The source as configured, or its number (from 1). */
  source: string;
};

/** `project/rename` params. */
export type ProjectRenameParams = {
  /** The new name. */
  name: string;
  /** Its id, name, or the start of its id. */
  project: string;
};

/** A project after a change. */
export type ProjectResponse = {
  /** The project now. */
  project: Project;
};

/** `project/retrySource` params: prepares one source again, even though it failed
 * before; answers when it is done. */
export type ProjectRetrySourceParams = {
  /** Its id, name, or the start of its id. */
  project: string;
  /** The source's target as `project/context` lists it. */
  source: string;
};

/** What a project's `project.md` gives the agents working in it, for the user to see
 * before Hearth acts on it: its description and instructions become their
 * instructions, folders outside become their working directories, files outside are
 * converted into the context they read, and web sources are fetched (and agents may
 * then fetch from those sites without asking). */
export type ProjectReview = {
  /** Its description. */
  description?: string | null;
  /** The digest of what is shown: sent back as `reviewDigest`, the trust holds only
   * if the file still gives exactly this. */
  digest: string;
  /** Its folder (links followed). */
  folder: string;
  /** The project's id, from the file. */
  id: string;
  /** How many sources stay inside the folder. */
  insideSources: number;
  /** Its instructions (the body of `project.md`, trimmed). */
  instructions: string;
  /** Its name, from the file. */
  name: string;
  /** Every source reaching outside the folder. */
  outsideSources: Array<ProjectOutsideSource>;
  /** Why it is asked. */
  reason: ProjectReviewReason;
  /** Every web and YouTube source. */
  webSources: Array<ProjectSource>;
};

/** Why a project's file is up for the user's review. */
export type ProjectReviewReason = ('adopt' | 'changed' | 'unrecorded');

/** One context source of a project. */
export type ProjectSource = {
  /** `web`, `youtube`, `file`, `folder` or `glob`. */
  kind: string;
  /** Its URL, path or pattern, as configured. */
  target: string;
};

/** Where one context source stands. */
export type ProjectSourceState = ('ready' | 'materializing' | 'pending' | 'failed');

/** One context source and where it stands (a pattern's files follow it). */
export type ProjectSourceStatus = {
  /** Why it failed, when it failed. */
  error?: string | null;
  /** `web`, `youtube`, `file`, `folder` or `glob`. */
  kind: string;
  /** Where it stands. */
  state: ProjectSourceState;
  /** Its URL, path or pattern. */
  target: string;
  /** The document's title, when it has one. */
  title?: string | null;
};

/** Whether a project can take new sessions. */
export type ProjectState = ('ready' | 'missing' | 'unreadable' | 'needsTrust');

/** `project/trust` params: the user accepts what a project's changed (or never trusted)
 * `project.md` gives its agents. */
export type ProjectTrustParams = {
  /** Its id, name, or the start of its id. */
  project: string;
  /** The `digest` of the review the user saw; fails with a `conflict` error if the
   * file gives anything else now. Without it, the file is trusted as it is. */
  reviewDigest?: string | null;
};

/** `project/update` params: the user's changes to a project's settings. A field left
 * out stays as it is; an empty string clears it. The project stays trusted: the change
 * is the user's own. */
export type ProjectUpdateParams = {
  /** The agent (a harness id from `initialize`) its new chats use. */
  defaultAgent?: string | null;
  /** The model its new chats use. */
  defaultModel?: string | null;
  /** A line about it. */
  description?: string | null;
  /** Its instructions (Markdown, the body of `project.md`). */
  instructions?: string | null;
  /** Its id, name, or the start of its id. */
  project: string;
};

/** A change a mutating tool staged, awaiting (or past) the user's decision. */
export type Proposal = {
  /** When applying ended. */
  appliedAt?: string | null;
  /** The payload hash the user approved. */
  approvedHash?: string | null;
  /** The model's call id. */
  callId: string;
  /** The chat that called the tool. */
  chat: string;
  /** When it was staged. */
  createdAt: string;
  /** When it was decided. */
  decidedAt?: string | null;
  /** Who decided. */
  decidedBy?: string | null;
  /** Before and after, human-readable. */
  diff: string;
  /** Why applying failed or was refused. */
  error?: string | null;
  /** When it expires unless applied. */
  expiresAt: string;
  /** The proposal. */
  id: string;
  /** What applying did. */
  outcome?: string | null;
  /** What applying does, exactly. */
  payload: unknown;
  /** SHA-256 of the payload's canonical JSON (lower-case hex); an approval names it. */
  payloadHash: string;
  /** Why the user rejected it, if they said. */
  reason?: string | null;
  /** The session of the call. */
  session: string;
  /** Where it is in its life. */
  status: ProposalStatus;
  /** One line a human reads. */
  summary: string;
  /** The tool that staged it and applies it. */
  tool: string;
  /** The turn of the call. */
  turnId: string;
  /** Its last change. */
  updatedAt: string;
};

/** `proposal/approve`: approves a pending proposal and applies it. The approval binds
 * to the payload the user was shown: a different hash is a conflict. */
export type ProposalApproveParams = {
  /** The `payloadHash` the user was shown. */
  payloadHash: string;
  /** The proposal. */
  proposalId: string;
};

/** What `proposal/approve` and `proposal/reject` return. */
export type ProposalDecisionResponse = {
  /** Whether this call changed it (false: it was already so). */
  changed: boolean;
  /** The proposal after the decision (for an approval, after applying it: `applied`,
   * or `failed` with its `error`). */
  proposal: Proposal;
};

/** `proposal/list`: a page of proposals, newest first. */
export type ProposalListParams = {
  /** Continue after this cursor (a previous page's `nextCursor`). */
  cursor?: string | null;
  /** Page size, 1 to 500 (default 50). */
  limit?: number | null;
  /** Only proposals from this session. */
  session?: string | null;
  /** Only proposals in these states (default: all). */
  statuses?: Array<ProposalStatus>;
};

/** What `proposal/list` returns. */
export type ProposalListResponse = {
  /** Pass as `cursor` for the next page; absent on the last page. */
  nextCursor?: string | null;
  /** The proposals. */
  proposals: Array<Proposal>;
};

/** `proposal/reject`: rejects a pending (or approved, not yet applied) proposal. */
export type ProposalRejectParams = {
  /** The proposal. */
  proposalId: string;
  /** Why, for the audit log. */
  reason?: string | null;
};

/** Where a proposal is in its life. */
export type ProposalStatus = ('pending' | 'approved' | 'rejected' | 'expired' | 'applying' | 'applied' | 'failed');

/** What a proposal would do to an event. */
export type ProposedAction = ('create' | 'update' | 'delete');

/** A pending proposal drawn as an event. */
export type ProposedEvent = {
  /** What it would do. */
  action: ProposedAction;
  /** Whether it lasts whole days. */
  allDay: boolean;
  /** The calendar it changes. */
  calendar: string;
  /** Same forms as [`CalendarEvent::end`]. */
  end: string;
  /** Its payload hash, which an approval names. */
  payloadHash: string;
  /** The proposal (`proposal/approve`, `proposal/reject`). */
  proposalId: string;
  /** Same forms as [`CalendarEvent::start`]. */
  start: string;
  /** The proposal's one line. */
  summary: string;
  /** Title (the new one for an update). */
  title: string;
  /** The event's UID (the one a created event would get, when known). */
  uid?: string | null;
};

/** Where a session was first registered from. */
export type Provenance = ('hearth' | 'external');

/** `provider/add`: tests a provider with the same check as `hearth doctor` and, only
 * if it answers, adds it to `config.toml` (comments and other entries kept). */
export type ProviderAddParams = {
  /** API base URL (default: the official endpoint of `kind`). */
  baseUrl?: string | null;
  /** Its id in `config.toml` (`[providers.<id>]`): letters, digits, `-` and `_`. */
  id: string;
  /** Its API key. */
  key: ProviderKeyParam;
  /** The API it speaks. */
  kind: ProviderKindParam;
  /** The model used when none is chosen. */
  model?: string | null;
};

/** What `provider/add` returns. */
export type ProviderAddResponse = ({
    /** The provider as `provider/list` now shows it. */
    provider: ProviderInfo;
    /** How the check went. */
    test: ProviderTestResult;
    type: 'added';
    /** Whether new chats can use it now; otherwise `hearth serve` must be
     * restarted first. */
    usableNow: boolean;
  } | {
    /** How the check went. */
    test: ProviderTestResult;
    type: 'failed';
  });

/** A model provider. */
export type ProviderInfo = {
  /** API base URL. */
  baseUrl: string;
  /** Why this base URL: `base_url in config.toml`, `from OPENAI_BASE_URL`, `official
   * endpoint: …`, `detected`. */
  baseUrlSource?: string;
  /** The model used when none is chosen. */
  defaultModel?: string | null;
  /** Provider id. */
  id: string;
  /** Whether its key is there. */
  key: KeyState;
  /** Models it is known to offer. */
  models: Array<string>;
  /** The API it speaks. */
  protocol: string;
  /** Where it was found (`config.toml`, the environment, a local Ollama). */
  source: string;
};

/** Where an added provider's API key comes from. */
export type ProviderKeyParam = ({
    /** The key. */
    key: string;
    type: 'pasted';
  } | {
    type: 'environment';
    /** Its name. */
    variable: string;
  } | {
    type: 'none';
  });

/** The API a provider added from a client speaks. */
export type ProviderKindParam = ('openai' | 'anthropic');

/** `provider/list`: the model providers from `config.toml`, the environment and a local
 * Ollama. */
export type ProviderListParams = { [key: string]: unknown };

/** What `provider/list` returns. */
export type ProviderListResponse = {
  /** Configured providers that cannot be used, and why. */
  problems: Array<string>;
  /** The providers. */
  providers: Array<ProviderInfo>;
};

/** `provider/remove`: removes a provider that `config.toml` declares (and its key file). */
export type ProviderRemoveParams = {
  /** Its id. */
  id: string;
};

/** What `provider/remove` returns. */
export type ProviderRemoveResponse = {
  /** Its id. */
  id: string;
  /** Whether its key file was deleted too. */
  keyFileRemoved: boolean;
};

/** How one check went. */
export type ProviderTestOutcome = ({
    /** How long the answer took, in milliseconds. */
    latencyMs: number;
    /** How it was asked, in words. */
    method: string;
    /** Models it offers. */
    models: Array<string>;
    /** Things worth fixing that do not stop it working. */
    notes: Array<string>;
    type: 'ok';
  } | {
    /** The exact error. */
    error: string;
    /** What to do about it. */
    fix: string;
    type: 'failed';
  });

/** `provider/test`: asks providers whether they answer. */
export type ProviderTestParams = {
  /** Only this provider (default: all). */
  provider?: string | null;
};

/** What `provider/test` returns. */
export type ProviderTestResponse = {
  /** One result per provider checked. */
  results: Array<ProviderTestResult>;
};

/** One provider's check. */
export type ProviderTestResult = {
  /** Its base URL. */
  baseUrl: string;
  /** What happened. */
  outcome: ProviderTestOutcome;
  /** Provider id. */
  provider: string;
};

/** The state of a resource. */
export type ResourceState = ({
    type: 'root';
  } | (SessionState & {
    type: 'session';
  }) | (ChatState & {
    type: 'chat';
  }));

/** One ordered piece of a response. */
export type ResponsePart = ({
    /** The text. */
    text: string;
    type: 'text';
  } | {
    /** The text. */
    text: string;
    type: 'reasoning';
  } | (ToolCallPart & {
    type: 'toolCall';
  }) | {
    /** The entries. */
    entries: Array<PlanEntry>;
    type: 'plan';
  } | {
    /** The proposal. */
    proposalId: string;
    /** What it would do. */
    summary: string;
    type: 'proposal';
  } | {
    /** The choices. */
    options: Array<PermissionOption>;
    /** The chosen option once answered (`cancelled` when its turn was aborted,
     * `expired` when the agent went away unanswered). */
    outcome?: string | null;
    /** Request id. */
    requestId: string;
    /** What is asked. */
    title: string;
    /** The tool call it is about. */
    toolCallId?: string | null;
    type: 'permissionRequest';
  } | {
    /** What failed and what to do. */
    message: string;
    type: 'error';
  } | {
    /** What happened. */
    message: string;
    type: 'notice';
  } | {
    /** The summary (empty while an agent is still writing it or keeps it to itself). */
    summary?: string;
    /** How many turns the summary stands for, when the agent says. */
    turns?: number | null;
    type: 'compaction';
  });

/** `subscription/resync`: the client fell behind; this snapshot replaces its state and
 * envelopes continue after its seq. */
export type ResyncNotification = {
  /** Why. */
  reason: ResyncReason;
  /** The fresh state. */
  snapshot: Snapshot;
};

/** Why the server sent a fresh snapshot instead of the next envelope. */
export type ResyncReason = ('lagged');

/** The `error` member of a JSON-RPC response. */
export type RpcError = {
  /** JSON-RPC error code (see [`ErrorKind::code`]). */
  code: number;
  /** Structured details. Always present in errors from Hearth. */
  data?: (ErrorData | null);
  /** What failed, on what, and what to do. */
  message: string;
};

/** Whether a session belongs to a project or to the global scope. */
export type Scope = ({
    type: 'global';
  } | {
    /** The project. */
    projectId: string;
    type: 'project';
  });

/** Which sessions a listing returns. */
export type ScopeFilter = ({
    type: 'any';
  } | {
    type: 'global';
  } | {
    /** The project. */
    projectId: string;
    type: 'project';
  });

/** One matching turn. */
export type SearchHit = {
  /** The chat's URI. */
  chat: string;
  /** The turn's number in its chat (1 is the first). */
  index: number;
  /** The session's URI. */
  session: string;
  /** The text around the match, in pieces. */
  snippet: Array<SnippetPiece>;
  /** When the turn started (RFC 3339). */
  startedAt: string;
  /** The session's title. */
  title?: string | null;
  /** The turn's id. */
  turnId: string;
};

/** `search/query`: the turns holding every word of `query` (three characters or more
 * each; any part of a word, any case), newest chat first. */
export type SearchQueryParams = {
  /** Only turns of this chat (its URI): search inside one conversation. */
  chat?: string | null;
  /** Continue after this cursor (`nextCursor` of the previous page). */
  cursor?: string | null;
  /** Only sessions of this harness (agent or provider id). */
  harness?: string | null;
  /** Page size (1..=200; 50 when absent). */
  limit?: number | null;
  /** Only sessions of this project. */
  projectId?: string | null;
  /** The words. */
  query: string;
  /** Only turns started at or after this time (RFC 3339). */
  since?: string | null;
};

/** What `search/query` returns. */
export type SearchQueryResponse = {
  /** The hits. */
  hits: Array<SearchHit>;
  /** Where the next page starts, when there is one. */
  nextCursor?: string | null;
};

/** Which optional parts of Hearth this server offers. */
export type ServerFeatures = {
  /** `audit/list` works. */
  audit: boolean;
  /** Hearth's tools are offered to MCP clients at `/mcp`. */
  mcp: boolean;
  /** `proposal/*` works. */
  proposals: boolean;
};

/** Who the server is. */
export type ServerInfo = {
  /** Always `hearth`. */
  name: string;
  /** Hearth's version. */
  version: string;
};

/** `session/create`: a new session with its default chat. */
export type SessionCreateParams = {
  /** The harness (default: the server's default harness; `provider`, its older name,
   * is read too). */
  harness?: string | null;
  /** The model. */
  model?: string | null;
  /** The project; absent means the global scope. Fixed for the session's life. */
  projectId?: string | null;
  /** Initial title. */
  title?: string | null;
  /** Absolute directories the agent works in: the first is its working directory, the
   * rest additional directories (default: the server's). Fixed for the session's life. */
  workingDirectories?: Array<string>;
};

/** What `session/create` and `session/fork` return. */
export type SessionCreateResponse = {
  /** The new session with its chat catalog. */
  session: SessionState;
};

/** `session/dispose`: deletes a session: moves it to the trash (`trash/restore`
 * brings it back), or erases it at once when it was never used (no turn, no draft).
 * Either way discovery never lists it again. */
export type SessionDisposeParams = {
  /** The session. */
  session: string;
};

/** What `session/dispose` returns. */
export type SessionDisposeResponse = {
  /** Whether the session went to the trash (`trash/restore` brings it back); `false`:
   * it was never used, and was erased at once. */
  trashed?: boolean;
};

/** `session/export`: one session as a file. */
export type SessionExportParams = {
  /** The format. */
  format: ExportFormat;
  /** The session's URI. */
  sessionId: string;
};

/** What `session/export` returns: the file. */
export type SessionExportResponse = {
  /** Its content. */
  content: string;
  /** A file name for it (`<title>-<id>.md` or `.jsonl`). */
  fileName: string;
  /** Its media type (`text/markdown`, `application/jsonl`). */
  mediaType: string;
};

/** `session/fork`: a new session whose default chat is a copy of another session's
 * default chat up to and including a turn. */
export type SessionForkParams = {
  /** The session forked from. */
  session: string;
  /** The last turn copied. */
  turnId: string;
};

/** `session/list`: a page of sessions, most recently updated first. */
export type SessionListParams = {
  /** Only archived sessions (`true`) or only those not archived (`false`); both when
   * absent. */
  archived?: boolean | null;
  /** Continue after this cursor (a previous page's `nextCursor`). */
  cursor?: string | null;
  /** Only this harness (`provider`, its older name, is read too). */
  harness?: string | null;
  /** Page size, 1 to 500 (default 50). */
  limit?: number | null;
  /** Only pinned sessions (`true`) or only those not pinned (`false`); both when absent. */
  pinned?: boolean | null;
  /** Only sessions created through Hearth, or only those found in a provider's own
   * catalog (default: both). */
  provenance?: (Provenance | null);
  /** Only this scope (default: any). */
  scope?: (ScopeFilter | null);
  /** Only sessions whose title contains this text (ASCII letters in any case; an
   * untitled session matches nothing). */
  titleContains?: string | null;
};

/** What `session/list` returns. */
export type SessionListResponse = {
  /** Pass as `cursor` for the next page; absent on the last page. */
  nextCursor?: string | null;
  /** The sessions. */
  sessions: Array<SessionSummary>;
};

/** `session/mark`: pins or unpins, archives or unarchives a session (a field left out
 * stays as it is). The root's and the session's subscribers get `sessionUpdated`. */
export type SessionMarkParams = {
  /** Archived or not. */
  archived?: boolean | null;
  /** Pinned or not. */
  pinned?: boolean | null;
  /** The session. */
  session: string;
};

/** `session/rename`: gives a session a title of the user's. The title is trimmed; it
 * must not be empty, longer than 200 characters or hold line breaks. The root's and the
 * session's subscribers get `sessionUpdated`. */
export type SessionRenameParams = {
  /** The session. */
  session: string;
  /** The new title. */
  title: string;
};

/** What `session/rename` returns. */
export type SessionRenameResponse = {
  /** The session's summary with its new title. */
  summary: SessionSummary;
};

/** `session/share` (a team server with users): shares a session with a team, whose
 * members then see and use it, or with nobody (`team` left out). A user shares their
 * own sessions, with a team they are in. The root's and the session's subscribers get
 * `sessionUpdated`. */
export type SessionShareParams = {
  /** The session. */
  session: string;
  /** The team; absent: shared with nobody. */
  team?: string | null;
};

/** A session with its chat catalog (default chat first, then peers in creation order). */
export type SessionState = {
  /** Its chats. */
  chats: Array<ChatListing>;
  /** The session. */
  summary: SessionSummary;
};

/** A session as listed.
 * 
 * Read the harness with [`SessionSummary::harness_id`]: a server older than the name
 * `harness` sends only `provider`. */
export type SessionSummary = {
  /** The user archived it (`session/mark`): kept and searchable, out of recent lists. */
  archived?: boolean;
  /** Its harness (empty from a server that predates the name: see `provider`). */
  harness?: string;
  /** The model, when chosen. */
  model?: string | null;
  /** On a team server: the id of the user it belongs to. */
  owner?: string | null;
  /** The user pinned it (`session/mark`): lists show it first. */
  pinned?: boolean;
  /** Created through Hearth or discovered. */
  provenance: Provenance;
  /** Deprecated: the same as `harness`, still sent for clients written before the
   * rename; [`SessionSummary::harness_id`] reads whichever is there. */
  provider?: string;
  /** The project scope, fixed for the session's life. */
  scope: Scope;
  /** Free-form source label (`cli`, `server`, `discovery`). */
  source: string;
  /** When it was created. */
  startedAt: string;
  /** On a team server: the team it is shared with. */
  team?: string | null;
  /** Display title. */
  title?: string | null;
  /** When anything in it last changed. */
  updatedAt: string;
  /** The session (`hearth-session:<harness>/<id>`). */
  uri: string;
  /** Where its agent works: the first is the working directory, the rest additional
   * directories. Fixed when the session is created. */
  workingDirectories?: Array<string>;
};

/** A resource's state and the last sequence number folded into it. */
export type Snapshot = {
  /** The resource. */
  resource: string;
  /** The last envelope folded into `state`; the next one has `seq + 1`. */
  seq: number;
  /** The state. */
  state: ResourceState;
};

/** A piece of a hit's snippet. */
export type SnippetPiece = {
  /** Whether it matches the query (to highlight). */
  match: boolean;
  /** The text. */
  text: string;
};

/** Why a turn ended. A reason Hearth does not know travels as its own text. */
export type StopReason = ('endTurn' | 'maxTokens' | 'stepLimit' | 'refusal' | 'aborted' | 'error' | 'incomplete' | string);

/** `subscribe`: the state of a resource, then its envelopes as
 * `subscription/envelope` notifications. With `lastSeq` (a reconnect), the envelopes
 * missed since then when the server still has them, else a fresh snapshot. */
export type SubscribeParams = {
  /** The last seq the client applied, when it reconnects. */
  lastSeq?: number | null;
  /** The resource: `hearth-root:`, a session or a chat URI. */
  resource: string;
  /** For a chat: the snapshot holds only its newest `turnLimit` turns (0: none), and
   * its `olderTurns` says whether earlier ones exist (read them with `chat/turns`).
   * Resyncs of this subscription keep the limit. Absent: every turn. Other resources
   * ignore it. */
  turnLimit?: number | null;
};

/** What `subscribe` returns. Envelopes of the resource follow it, each with the next seq. */
export type SubscribeResponse = ({
    /** The state and its seq. */
    snapshot: Snapshot;
    type: 'snapshot';
  } | {
    /** The missed envelopes, in order. */
    envelopes: Array<Envelope>;
    /** The resource. */
    resource: string;
    type: 'replay';
  });

/** `subscription/ended`: the resource is gone (deleted, or its session evicted and not
 * loadable); no more envelopes come. */
export type SubscriptionEndedNotification = {
  /** What happened. */
  reason: string;
  /** The resource. */
  resource: string;
};

/** Content a tool call produced. */
export type ToolCallContent = ({
    /** The text. */
    text: string;
    type: 'text';
  } | {
    /** Its content after. */
    newText: string;
    /** Its content before (absent for a new file). */
    oldText?: string | null;
    /** The file. */
    path: string;
    type: 'diff';
  } | {
    /** The terminal's id. */
    terminalId: string;
    type: 'terminal';
  });

/** A tool call inside a response. */
export type ToolCallPart = {
  /** Arguments as given. */
  arguments: unknown;
  /** Call id, unique within the turn. */
  callId: string;
  /** What it produced: text, diffs, terminals. */
  content?: Array<ToolCallContent>;
  /** What kind of work it does. */
  kind?: (ToolKind | null);
  /** The files it touches. */
  locations?: Array<ToolLocation>;
  /** Tool name. */
  name: string;
  /** The result once finished. */
  result?: (ToolResult | null);
  /** Where the call is in its lifecycle. */
  status: ToolCallStatus;
  /** A title for people (external agents give one). */
  title?: string | null;
};

/** Changed details of a tool call; an absent field is unchanged, a present one replaces. */
export type ToolCallPatch = {
  /** New arguments. */
  arguments?: unknown;
  /** New content. */
  content?: Array<ToolCallContent> | null;
  /** A new kind. */
  kind?: (ToolKind | null);
  /** New locations. */
  locations?: Array<ToolLocation> | null;
  /** A new title. */
  title?: string | null;
};

/** Lifecycle of a tool call. */
export type ToolCallStatus = ('pending' | 'running' | 'completed' | 'failed' | 'cancelled');

/** What kind of work a tool call does. */
export type ToolKind = ('read' | 'edit' | 'delete' | 'move' | 'search' | 'execute' | 'think' | 'fetch' | 'switchMode' | 'other');

/** A file a tool call touches. */
export type ToolLocation = {
  /** A line in it (1-based). */
  line?: number | null;
  /** The file's path. */
  path: string;
};

/** What a tool call returned. */
export type ToolResult = {
  /** Text given back to the model. */
  content: string;
  /** Whether the content describes an error. */
  isError?: boolean;
};

/** `trash/empty`: erases everything in the trash (no parameters). */
export type TrashEmptyParams = { [key: string]: unknown };

/** What `trash/empty` returns. */
export type TrashEmptyResponse = {
  /** How many items were erased. */
  erased: number;
};

/** One item in the trash. */
export type TrashItem = {
  /** When it was deleted (RFC 3339). */
  deletedAt: string;
  /** The session's URI or the project's id. */
  id: string;
  /** Session or project. */
  kind: TrashKind;
  /** When it is erased by itself (`[history] trash_days`), RFC 3339; `null` when it
   * stays until the trash is emptied. */
  purgeAt?: string | null;
  /** The session's title or the project's name. */
  title?: string | null;
};

/** What a trash item is. */
export type TrashKind = ('session' | 'project');

/** `trash/list`: everything in the trash (no parameters). */
export type TrashListParams = { [key: string]: unknown };

/** What `trash/list` returns: newest deletion first. */
export type TrashListResponse = {
  /** The items. */
  items: Array<TrashItem>;
};

/** `trash/restore`: takes a session or project out of the trash. */
export type TrashRestoreParams = {
  /** The session's URI or the project's id. */
  id: string;
  /** Session or project. */
  kind: TrashKind;
};

/** What `trash/restore` returns. */
export type TrashRestoreResponse = { [key: string]: unknown };

/** One exchange: a user message and the response. */
export type Turn = {
  /** When it ended. */
  completedAt?: string | null;
  /** The turn's id. */
  id: string;
  /** The response, in order. */
  parts?: Array<ResponsePart>;
  /** When the user sent it. */
  startedAt: string;
  /** Why the turn ended; absent while it runs. */
  stopReason?: (StopReason | null);
  /** Token usage, when reported. */
  usage?: (Usage | null);
  /** What the user sent. */
  user: UserMessage;
};

/** `unsubscribe`: no more envelopes of a resource. */
export type UnsubscribeParams = {
  /** The resource. */
  resource: string;
};

/** What `unsubscribe` returns. */
export type UnsubscribeResponse = {
  /** Whether the connection was subscribed. */
  unsubscribed: boolean;
};

/** Token usage of a turn, and what the agent says about its context window and cost. */
export type Usage = {
  /** Prompt tokens served from a cache. */
  cachedInputTokens?: number;
  /** The context window's size in tokens, when the agent says. */
  contextSize?: number | null;
  /** Tokens in the context window now, when the agent says. */
  contextUsed?: number | null;
  /** What the conversation has cost so far, when the agent says. */
  cost?: (Cost | null);
  /** Prompt tokens. */
  inputTokens?: number;
  /** Completion tokens. */
  outputTokens?: number;
  /** Tokens spent on reasoning. */
  reasoningTokens?: number;
};

/** What the user sent. */
export type UserMessage = {
  /** Files attached to the message. */
  attachments?: Array<Attachment>;
  /** Context the user pointed at (notes, URLs, selections). */
  context?: Array<ContextReference>;
  /** The prompt text. */
  text: string;
};

/** Every request: its params and result. */
export interface Methods {
  'agent/connect': { params: AgentConnectParams; result: AgentConnectResponse };
  'agent/disconnect': { params: AgentDisconnectParams; result: AgentDisconnectResponse };
  'attachment/upload': { params: AttachmentUploadParams; result: AttachmentUploadResponse };
  'audit/list': { params: AuditListParams; result: AuditListResponse };
  'audit/verify': { params: AuditVerifyParams; result: AuditVerifyResponse };
  'calendar/events': { params: CalendarEventsParams; result: CalendarEventsResponse };
  'calendar/list': { params: CalendarListParams; result: CalendarListResponse };
  'chat/abort': { params: ChatParams; result: ChatAbortResponse };
  'chat/compact': { params: ChatParams; result: ChatCompactResponse };
  'chat/create': { params: ChatCreateParams; result: ChatCreateResponse };
  'chat/dispose': { params: ChatParams; result: ChatDisposeResponse };
  'chat/queue': { params: ChatQueueParams; result: ChatQueueResponse };
  'chat/resolve': { params: ChatParams; result: ChatResolveResponse };
  'chat/send': { params: ChatSendParams; result: ChatSendResponse };
  'chat/setDraft': { params: ChatSetDraftParams; result: ChatSetDraftResponse };
  'chat/setMode': { params: ChatSetModeParams; result: ChatSetModeResponse };
  'chat/setModel': { params: ChatSetModelParams; result: ChatSetModelResponse };
  'chat/setQueue': { params: ChatSetQueueParams; result: ChatSetQueueResponse };
  'chat/turns': { params: ChatTurnsParams; result: ChatTurnsResponse };
  'harness/start': { params: HarnessStartParams; result: HarnessStartResponse };
  'initialize': { params: InitializeParams; result: InitializeResponse };
  'permission/grants': { params: PermissionGrantsParams; result: PermissionGrantsResponse };
  'permission/list': { params: PermissionListParams; result: PermissionListResponse };
  'permission/respond': { params: PermissionRespondParams; result: PermissionRespondResponse };
  'permission/revokeGrant': { params: PermissionRevokeGrantParams; result: PermissionRevokeGrantResponse };
  'project/addSource': { params: ProjectAddSourceParams; result: ProjectResponse };
  'project/context': { params: ProjectContextParams; result: ProjectContextResponse };
  'project/create': { params: ProjectCreateParams; result: ProjectCreateResponse };
  'project/delete': { params: ProjectParams; result: ProjectDeleteResponse };
  'project/get': { params: ProjectParams; result: ProjectResponse };
  'project/list': { params: ProjectListParams; result: ProjectListResponse };
  'project/relink': { params: ProjectRelinkParams; result: ProjectResponse };
  'project/removeSource': { params: ProjectRemoveSourceParams; result: ProjectResponse };
  'project/rename': { params: ProjectRenameParams; result: ProjectResponse };
  'project/retrySource': { params: ProjectRetrySourceParams; result: ProjectContextResponse };
  'project/trust': { params: ProjectTrustParams; result: ProjectResponse };
  'project/update': { params: ProjectUpdateParams; result: ProjectResponse };
  'proposal/approve': { params: ProposalApproveParams; result: ProposalDecisionResponse };
  'proposal/list': { params: ProposalListParams; result: ProposalListResponse };
  'proposal/reject': { params: ProposalRejectParams; result: ProposalDecisionResponse };
  'provider/add': { params: ProviderAddParams; result: ProviderAddResponse };
  'provider/list': { params: ProviderListParams; result: ProviderListResponse };
  'provider/remove': { params: ProviderRemoveParams; result: ProviderRemoveResponse };
  'provider/test': { params: ProviderTestParams; result: ProviderTestResponse };
  'search/query': { params: SearchQueryParams; result: SearchQueryResponse };
  'session/create': { params: SessionCreateParams; result: SessionCreateResponse };
  'session/dispose': { params: SessionDisposeParams; result: SessionDisposeResponse };
  'session/export': { params: SessionExportParams; result: SessionExportResponse };
  'session/fork': { params: SessionForkParams; result: SessionCreateResponse };
  'session/list': { params: SessionListParams; result: SessionListResponse };
  'session/mark': { params: SessionMarkParams; result: SessionRenameResponse };
  'session/rename': { params: SessionRenameParams; result: SessionRenameResponse };
  'session/share': { params: SessionShareParams; result: SessionRenameResponse };
  'subscribe': { params: SubscribeParams; result: SubscribeResponse };
  'trash/empty': { params: TrashEmptyParams; result: TrashEmptyResponse };
  'trash/list': { params: TrashListParams; result: TrashListResponse };
  'trash/restore': { params: TrashRestoreParams; result: TrashRestoreResponse };
  'unsubscribe': { params: UnsubscribeParams; result: UnsubscribeResponse };
}

/** Every notification the server sends: its params. */
export interface Notifications {
  'subscription/ended': SubscriptionEndedNotification;
  'subscription/envelope': Envelope;
  'subscription/resync': ResyncNotification;
}
