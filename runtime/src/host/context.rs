//! A context that owns its table.
//!
//! [`Context`] borrows its [`Table`] (`Context<'t>`): the decision path reads
//! the table's words with no reference count and no indirection. Hosts in
//! other languages hold a context in an object of their own with no Rust
//! lifetime, so the table must live as long as that object: this type keeps
//! the table's `Arc` beside the context that borrows it. It is the one
//! lifetime extension of the code base; bindings use it and have none of
//! their own.

use std::sync::Arc;

use crate::context::{Context, ContextError, Role};
use crate::run::RunState;
use crate::table::Table;

/// A [`Context`] together with the table it borrows. Build it as a
/// context is built (`HostContext::new(table, "chat")?.role(Role::User)`),
/// then decide through [`HostContext::get`].
pub struct HostContext {
    // Declared before `table`: dropped first, while the table it borrows
    // still lives.
    ctx: Context<'static>,
    table: Arc<Table>,
}

impl HostContext {
    /// A context for `configuration` of `table` (role none, no consumer, a
    /// new run, the policy's enforcement), as [`Table::context`] makes it.
    pub fn new(table: Arc<Table>, configuration: &str) -> Result<HostContext, ContextError> {
        // SAFETY: the reference points into the heap allocation of `table`,
        // which an `Arc` never moves and which lives as long as this value
        // holds the `Arc`. The `'static` lifetime never leaves this type:
        // `get` hands the context out only for the lifetime of `&self`, and
        // every builder below consumes and returns the context without
        // letting a reference out. `Context` is covariant in its lifetime
        // (checked by the compiler in `get`), so shortening it is sound.
        let table_ref: &'static Table = unsafe { &*Arc::as_ptr(&table) };
        let ctx = table_ref.context(configuration)?;
        Ok(HostContext { ctx, table })
    }

    /// The context, for as long as this value is borrowed.
    #[inline]
    pub fn get(&self) -> &Context<'_> {
        &self.ctx
    }

    /// The table the context decides with.
    pub fn table(&self) -> &Arc<Table> {
        &self.table
    }

    fn map(self, f: impl FnOnce(Context<'static>) -> Context<'static>) -> HostContext {
        HostContext {
            ctx: f(self.ctx),
            table: self.table,
        }
    }

    /// [`Context::role`].
    pub fn role(self, role: Role) -> HostContext {
        self.map(|c| c.role(role))
    }

    /// [`Context::known_consumer`]: a name the policy does not know is an
    /// error, never a consumer without a profile.
    pub fn consumer(self, consumer: Option<&str>) -> Result<HostContext, ContextError> {
        let HostContext { ctx, table } = self;
        Ok(HostContext {
            ctx: ctx.known_consumer(consumer)?,
            table,
        })
    }

    /// [`Context::enforcement`].
    pub fn enforcement(self, setting: Option<&str>) -> HostContext {
        self.map(|c| c.enforcement(setting))
    }

    /// [`Context::run`] (the run is copied into the context).
    pub fn run(self, run: &RunState) -> HostContext {
        self.map(|c| c.run(run))
    }
}

impl Clone for HostContext {
    /// A second context over the same table (the clone holds its own `Arc`).
    fn clone(&self) -> HostContext {
        HostContext {
            ctx: self.ctx.clone(),
            table: Arc::clone(&self.table),
        }
    }
}

impl std::fmt::Debug for HostContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostContext")
            .field("configuration", &self.ctx.configuration_name())
            .field("role", &self.ctx.user_role())
            .field("consumer", &self.ctx.consumer_name())
            .field("mode", &self.ctx.mode())
            .finish()
    }
}
