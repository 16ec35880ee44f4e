//! The model of the API evolution guard: the rules (all in the `rules!` table below), their effects, the audiences
//! and sides, and the changes a comparison returns. `diff.rs` compares, `report.rs` prints; both read this
//! module and nothing here reads them.

use serde::Serialize;

/// Who sends the messages a schema describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Side {
    /// Client to server: parameters, request bodies, credentials; and the answers a webhook receiver gives.
    #[serde(rename = "client-to-server")]
    Request,
    /// Server to client: responses; and the webhook events the service delivers (callback requests).
    #[serde(rename = "server-to-client")]
    Response,
}

impl Side {
    pub const BOTH: [Side; 2] = [Side::Request, Side::Response];

    pub(super) fn flip(self) -> Side {
        match self {
            Side::Request => Side::Response,
            Side::Response => Side::Request,
        }
    }

    pub fn arrow(self) -> &'static str {
        match self {
            Side::Request => "client→server",
            Side::Response => "server→client",
        }
    }
}

/// What a change does to the set of messages that are valid where it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Fewer messages are valid: breaks the sender.
    Narrows,
    /// More messages are valid: breaks the receiver.
    Widens,
    /// Some valid messages become invalid and others valid: breaks both.
    Changes,
    /// Something generated code names (operation, member, value, status) is gone: breaks both.
    Removes,
    /// No message changes validity: compatible.
    Neutral,
}

impl Effect {
    /// The audiences a change with this effect breaks when the messages are sent on `side`.
    pub fn breaks(self, side: Side) -> Audiences {
        let (sender, receiver) = match side {
            Side::Request => (Audiences::CLIENTS, Audiences::SERVERS),
            Side::Response => (Audiences::SERVERS, Audiences::CLIENTS),
        };
        match self {
            Effect::Narrows => sender,
            Effect::Widens => receiver,
            Effect::Changes | Effect::Removes => Audiences::BOTH,
            Effect::Neutral => Audiences::NONE,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Effect::Narrows => "narrows",
            Effect::Widens => "widens",
            Effect::Changes => "changes",
            Effect::Removes => "removes",
            Effect::Neutral => "neutral",
        }
    }
}

/// In which messages a rule's change can be: requests are what clients send (parameters, bodies, credentials,
/// and which operations exist); responses what servers send (answers, statuses, webhook deliveries).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found {
    InRequests,
    InResponses,
    Anywhere,
    /// In the document only (`info.version`): compatible.
    Nowhere,
}

impl Found {
    pub fn includes(self, side: Side) -> bool {
        match self {
            Found::InRequests => side == Side::Request,
            Found::InResponses => side == Side::Response,
            Found::Anywhere => true,
            Found::Nowhere => false,
        }
    }
}

/// Which audiences a change breaks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Audiences {
    pub clients: bool,
    pub servers: bool,
}

impl Audiences {
    pub const NONE: Audiences = Audiences { clients: false, servers: false };
    pub const CLIENTS: Audiences = Audiences { clients: true, servers: false };
    pub const SERVERS: Audiences = Audiences { clients: false, servers: true };
    pub const BOTH: Audiences = Audiences { clients: true, servers: true };

    pub fn any(self) -> bool {
        self.clients || self.servers
    }

    pub(super) fn union(self, other: Audiences) -> Audiences {
        Audiences { clients: self.clients || other.clients, servers: self.servers || other.servers }
    }

    /// `clients`, `servers`, `clients+servers`, or `-`.
    pub fn label(self) -> &'static str {
        match (self.clients, self.servers) {
            (true, true) => "clients+servers",
            (true, false) => "clients",
            (false, true) => "servers",
            (false, false) => "-",
        }
    }
}

/// Defines [`Rule`]: every rule with its id, its effect and what it means, in one table.
macro_rules! rules {
    ($($(#[doc = $doc:literal])* $variant:ident = $id:literal, $effect:ident, $found:ident;)*) => {
        /// A kind of change the guard recognises.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Rule {
            $($(#[doc = $doc])* $variant,)*
        }

        impl Rule {
            pub const ALL: &'static [Rule] = &[$(Rule::$variant,)*];

            /// The stable id printed in reports and used in fixtures (`member-added-required`).
            pub fn id(self) -> &'static str {
                match self { $(Rule::$variant => $id,)* }
            }

            pub fn effect(self) -> Effect {
                match self { $(Rule::$variant => Effect::$effect,)* }
            }

            /// In which messages the change can be.
            pub fn found(self) -> Found {
                match self { $(Rule::$variant => Found::$found,)* }
            }

            /// What the rule covers (its doc comment).
            pub fn meaning(self) -> &'static str {
                match self { $(Rule::$variant => concat!($($doc),*).trim_ascii(),)* }
            }
        }
    };
}

rules! {
    /// A new operation (method and path): a new `BridgeApi` method every server implements; servers built from
    /// the base answer 404.
    OperationAdded = "operation-added", Widens, InRequests;
    /// An operation is gone.
    OperationRemoved = "operation-removed", Removes, InRequests;
    /// An operation (same operationId) moved to another method or path.
    OperationMoved = "operation-moved", Changes, InRequests;
    /// An operation's operationId changed (generated method and type names change).
    OperationRenamed = "operation-renamed", Changes, InRequests;
    /// An operation accepts a credential (or no credential) it did not accept.
    SecurityAdded = "security-added", Widens, InRequests;
    /// An operation no longer accepts a credential it accepted, or now requires one.
    SecurityRemoved = "security-removed", Narrows, InRequests;
    /// A security scheme an operation uses changed (type, scheme, header name, bearer format).
    SecuritySchemeChanged = "security-scheme-changed", Changes, InRequests;
    /// A status code (or `default`) an operation may answer is new.
    StatusAdded = "status-added", Widens, InResponses;
    /// A status code an operation answered is gone.
    StatusRemoved = "status-removed", Removes, InResponses;
    /// A request or response has a new content type.
    MediaTypeAdded = "media-type-added", Widens, Anywhere;
    /// A request or response content type is gone.
    MediaTypeRemoved = "media-type-removed", Removes, Anywhere;
    /// An operation has a new callback (the service sends a new kind of request to the client).
    CallbackAdded = "callback-added", Widens, InResponses;
    /// A callback is gone.
    CallbackRemoved = "callback-removed", Removes, InResponses;
    /// A required member, parameter, header or body is new.
    MemberAddedRequired = "member-added-required", Narrows, Anywhere;
    /// An optional member, parameter, header or body is new (in an object that allows unknown members).
    MemberAddedOptional = "member-added-optional", Neutral, Anywhere;
    /// A member is new in a closed object (`additionalProperties: false`), whose receivers refuse unknown members.
    MemberAddedClosed = "member-added-to-closed-object", Widens, Anywhere;
    /// A member, parameter, header or body is gone.
    MemberRemoved = "member-removed", Removes, Anywhere;
    /// A member, parameter, header or body became required.
    MemberMadeRequired = "member-made-required", Narrows, Anywhere;
    /// A member, parameter, header or body became optional.
    MemberMadeOptional = "member-made-optional", Widens, Anywhere;
    /// A value may now be `null`.
    MadeNullable = "made-nullable", Widens, Anywhere;
    /// A value may no longer be `null`.
    MadeNonNullable = "made-non-nullable", Narrows, Anywhere;
    /// A type, format or referenced component changed.
    TypeChanged = "type-changed", Changes, Anywhere;
    /// A constraint became stricter: length, pattern added, bounds, item counts, closed object, integer only.
    ConstraintTightened = "constraint-tightened", Narrows, Anywhere;
    /// A constraint became looser (the reverse of the above).
    ConstraintLoosened = "constraint-loosened", Widens, Anywhere;
    /// A constraint changed in a way that is neither (a pattern replaced by another).
    ConstraintChanged = "constraint-changed", Changes, Anywhere;
    /// An enum has a new value (generated enums are closed).
    EnumValueAdded = "enum-value-added", Widens, Anywhere;
    /// An enum value is gone.
    EnumValueRemoved = "enum-value-removed", Removes, Anywhere;
    /// A union has a new variant: a discriminator mapping or `oneOf` member, such as a new event kind.
    UnionVariantAdded = "union-variant-added", Widens, Anywhere;
    /// A union variant is gone.
    UnionVariantRemoved = "union-variant-removed", Removes, Anywhere;
    /// A default value was added, removed or changed (an omitted member now means something else).
    DefaultChanged = "default-changed", Changes, Anywhere;
    /// Something was deprecated or undeprecated.
    Deprecated = "deprecation-changed", Neutral, Anywhere;
    /// A description, summary, title, example or tag was reworded.
    DescriptionChanged = "description-changed", Neutral, Anywhere;
    /// `info.version`, the interface version the service declares, changed.
    InterfaceVersionChanged = "interface-version-changed", Neutral, Nowhere;
    /// A keyword the guard does not know changed: counted as breaking for both until a rule covers it.
    Unclassified = "unclassified-change", Changes, Anywhere;
}

impl Serialize for Rule {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.id())
    }
}

/// An operation, or a callback of one (the request the service sends to the client).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct OpRef {
    pub path: String,
    pub method: String,
    pub operation_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub callback: Option<CallbackRef>,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct CallbackRef {
    pub name: String,
    pub expression: String,
    pub method: String,
}

impl OpRef {
    /// `quoteBridge`, or `quoteBridge/webhookEvent` for a callback.
    pub fn label(&self) -> String {
        match &self.callback {
            None => self.operation_id.clone(),
            Some(c) => format!("{}/{}", self.operation_id, c.name),
        }
    }

    /// `quoteBridge: POST /bridge/quote/user`.
    pub fn title(&self) -> String {
        match &self.callback {
            None => format!("{}: {} {}", self.operation_id, self.method.to_uppercase(), self.path),
            Some(c) => format!(
                "{}: {} {} (callback of {} {}: the service sends it, the client answers)",
                self.label(),
                c.method.to_uppercase(),
                c.expression,
                self.method.to_uppercase(),
                self.path
            ),
        }
    }
}

/// Where a change is: in one operation, in a component (shared by the operations that use it), or in the
/// document itself.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Group {
    Operation(OpRef),
    Component { pointer: String, name: String },
    Document,
}

/// One use of the place a change is in.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Use {
    pub operation: OpRef,
    pub side: Side,
}

/// One classified change.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Change {
    pub rule: Rule,
    /// The audiences it breaks (none: compatible).
    pub breaks: Audiences,
    /// The member, value, parameter, status or operation it is about, as `Component.member`,
    /// `operationId.parameter`, `operationId.404`, `Enum.VALUE` or `operationId`.
    pub subject: String,
    /// What changed (`maxLength 80 → 40`).
    pub detail: String,
    /// JSON pointer into the bundled document: the head document, or the base one for what was removed.
    pub path: String,
    pub group: Group,
    /// The operations that use the place, and on which side.
    pub uses: Vec<Use>,
}

impl Change {
    pub fn is_breaking(&self) -> bool {
        self.breaks.any()
    }
}

/// The result of a comparison: changes sorted by group, then JSON path.
#[derive(Debug, Default)]
pub struct Comparison {
    pub changes: Vec<Change>,
}

impl Comparison {
    pub fn breaking(&self) -> impl Iterator<Item = &Change> {
        self.changes.iter().filter(|c| c.is_breaking())
    }

    pub fn is_breaking(&self) -> bool {
        self.breaking().next().is_some()
    }
}
