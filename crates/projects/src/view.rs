//! Which scope a client is in and which session it shows, kept to one invariant: the
//! active session belongs to the active scope. Opening a session of another scope
//! switches the scope first; an open that fails puts the previous scope and session
//! back — unless the user moved on meanwhile, whose choice then stands. Every client
//! (`hearth chat`, the web UI) keeps its view through this one piece.

use hearth_core::{Scope, SessionUri};

/// A client's active scope and session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScopeView {
    scope: Scope,
    session: Option<(SessionUri, Scope)>,
    /// Grows with every change, so a late result can tell whether it is still wanted.
    generation: u64,
}

/// An open in progress: what to put back if it fails.
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use = "finish or fail the open"]
pub struct PendingOpen {
    previous_scope: Scope,
    previous_session: Option<(SessionUri, Scope)>,
    /// The view's generation once the open switched scope.
    generation: u64,
    scope: Scope,
}

/// What became of an open that ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenEnd {
    /// The session is active now.
    Opened,
    /// The open failed and the previous scope and session are back.
    RolledBack,
    /// The user moved to another scope or session meanwhile; their choice stands.
    Superseded,
}

impl ScopeView {
    /// A view in `scope`, with no session yet.
    pub fn new(scope: Scope) -> Self {
        Self {
            scope,
            session: None,
            generation: 0,
        }
    }

    /// A view restored to a session (after a restart): its scope is the session's.
    pub fn restore(session: SessionUri, scope: Scope) -> Self {
        Self {
            scope: scope.clone(),
            session: Some((session, scope)),
            generation: 0,
        }
    }

    /// The active scope.
    pub fn scope(&self) -> &Scope {
        &self.scope
    }

    /// The active session, if one is open.
    pub fn session(&self) -> Option<&SessionUri> {
        self.session.as_ref().map(|(session, _)| session)
    }

    /// Whether the active session (if any) belongs to the active scope.
    pub fn is_consistent(&self) -> bool {
        self.session
            .as_ref()
            .is_none_or(|(_, scope)| scope == &self.scope)
    }

    /// Enters a scope. Leaving the active session's scope leaves no session active.
    pub fn enter(&mut self, scope: Scope) {
        if scope != self.scope {
            self.scope = scope;
            self.session = None;
            self.generation += 1;
        }
    }

    /// Makes a session of the active scope active (e.g. one just created in it).
    /// A session of another scope is refused: open it with [`ScopeView::begin_open`].
    pub fn activate(&mut self, session: SessionUri, scope: Scope) -> Result<(), Scope> {
        if scope != self.scope {
            return Err(scope);
        }
        self.session = Some((session, scope));
        self.generation += 1;
        Ok(())
    }

    /// Starts opening a session of `scope` (an existing one, or one about to be made in
    /// it): the scope is switched first, and no session is active while it opens.
    pub fn begin_open(&mut self, scope: Scope) -> PendingOpen {
        let previous_scope = self.scope.clone();
        let previous_session = self.session.take();
        self.scope = scope.clone();
        self.generation += 1;
        PendingOpen {
            previous_scope,
            previous_session,
            generation: self.generation,
            scope,
        }
    }

    /// The open succeeded with `session`: it is active, unless the user moved on
    /// meanwhile.
    pub fn finish_open(&mut self, pending: PendingOpen, session: SessionUri) -> OpenEnd {
        if pending.generation != self.generation {
            return OpenEnd::Superseded;
        }
        self.session = Some((session, pending.scope));
        self.generation += 1;
        OpenEnd::Opened
    }

    /// The open failed: the previous scope and session come back, but only while the
    /// view is still parked where the open put it.
    pub fn fail_open(&mut self, pending: PendingOpen) -> OpenEnd {
        if pending.generation != self.generation {
            return OpenEnd::Superseded;
        }
        self.scope = pending.previous_scope;
        self.session = pending.previous_session;
        self.generation += 1;
        OpenEnd::RolledBack
    }
}

#[cfg(test)]
mod tests {
    use hearth_core::{HarnessId, ProjectId, SessionId};
    use pretty_assertions::assert_eq;

    use super::*;

    fn project(id: &str) -> Scope {
        Scope::Project {
            project_id: ProjectId::parse(id).unwrap(),
        }
    }

    fn session(id: &str) -> SessionUri {
        SessionUri::new(
            HarnessId::parse("mock").unwrap(),
            SessionId::parse(id).unwrap(),
        )
    }

    #[test]
    fn opening_a_session_of_another_scope_switches_the_scope_first() {
        let mut view = ScopeView::new(Scope::Global);
        view.activate(session("g1"), Scope::Global).unwrap();
        let pending = view.begin_open(project("herons"));
        assert_eq!(view.scope(), &project("herons"));
        assert_eq!(view.session(), None);
        assert!(view.is_consistent());
        assert_eq!(view.finish_open(pending, session("p1")), OpenEnd::Opened);
        assert_eq!(
            (view.scope(), view.session()),
            (&project("herons"), Some(&session("p1")))
        );
        assert!(view.is_consistent());
    }

    #[test]
    fn a_failed_open_puts_the_previous_scope_and_session_back() {
        let mut view = ScopeView::new(Scope::Global);
        view.activate(session("g1"), Scope::Global).unwrap();
        let before = view.clone();
        let pending = view.begin_open(project("herons"));
        assert_eq!(view.fail_open(pending), OpenEnd::RolledBack);
        assert_eq!(
            (view.scope(), view.session()),
            (before.scope(), before.session())
        );
        assert!(view.is_consistent());
    }

    #[test]
    fn a_failed_open_leaves_a_scope_the_user_moved_to_alone() {
        let mut view = ScopeView::new(Scope::Global);
        view.activate(session("g1"), Scope::Global).unwrap();
        let pending = view.begin_open(project("herons"));
        // While the open waits (an agent starting), the user enters another project.
        view.enter(project("owls"));
        assert_eq!(view.fail_open(pending), OpenEnd::Superseded);
        assert_eq!((view.scope(), view.session()), (&project("owls"), None));
        assert!(view.is_consistent());
    }

    #[test]
    fn a_late_success_does_not_drag_the_user_back() {
        let mut view = ScopeView::new(Scope::Global);
        let pending = view.begin_open(project("herons"));
        view.enter(Scope::Global);
        view.activate(session("g2"), Scope::Global).unwrap();
        assert_eq!(
            view.finish_open(pending, session("p1")),
            OpenEnd::Superseded
        );
        assert_eq!(
            (view.scope(), view.session()),
            (&Scope::Global, Some(&session("g2")))
        );
    }

    #[test]
    fn a_session_of_another_scope_cannot_be_activated_without_opening_it() {
        let mut view = ScopeView::new(project("herons"));
        assert_eq!(
            view.activate(session("g1"), Scope::Global),
            Err(Scope::Global)
        );
        assert_eq!(view.session(), None);
        assert!(view.is_consistent());
    }

    #[test]
    fn entering_another_scope_leaves_no_session_of_the_old_one_active() {
        let mut view = ScopeView::new(project("herons"));
        view.activate(session("p1"), project("herons")).unwrap();
        view.enter(project("herons"));
        assert_eq!(view.session(), Some(&session("p1")));
        view.enter(Scope::Global);
        assert_eq!(view.session(), None);
        assert!(view.is_consistent());
    }

    #[test]
    fn a_restored_view_is_in_its_sessions_scope() {
        let view = ScopeView::restore(session("p1"), project("herons"));
        assert_eq!(view.scope(), &project("herons"));
        assert!(view.is_consistent());
    }
}
