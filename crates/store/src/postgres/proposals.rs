//! Proposals on PostgreSQL: what only PostgreSQL does (the statements both databases
//! share are in `proposal_statements`).

use futures::future::BoxFuture;
use hearth_core::{ProposalId, Timestamp};

use super::PgStore;
use crate::error::StoreResult;
use crate::proposals::{
    ProposalPage, ProposalQuery, ProposalRecord, ProposalStatus, ProposalStore,
};

crate::proposals::proposal_store_by_impls!(PgStore);
