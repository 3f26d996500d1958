//! The part of a turn's cache key that is not the part's own revision.

use crate::model::PartBody;
use crate::render::blocks;

/// Everything besides the part's own revision that its lines depend on: the
/// fold, the detail level, a waiting permission, the clock of a running
/// tool (its spinner and elapsed time), and a subagent's progress.
pub(super) fn variant(
    part: &crate::model::Part,
    expanded: bool,
    full: bool,
    ctx: &blocks::RenderCtx,
) -> u64 {
    let mut v = expanded as u64 | (full as u64) << 1 | (ctx.detail as u64) << 2;
    if let PartBody::Tool(t) = &part.body {
        if ctx.awaiting.contains(&t.call_id) {
            v |= 1 << 4;
        }
        if crate::render::tools::left_unfinished(part, ctx) {
            // Still, without a spinner: redrawn when that becomes so.
            v |= 1 << 5;
        } else if matches!(
            t.state.status,
            crate::model::ToolStatus::Running | crate::model::ToolStatus::Pending
        ) {
            v ^= ((ctx.now_ms / 250) as u64) << 8;
        }
        // A task card counts its child's work, finished or not: the child
        // may load after the card was drawn (an archived one is read when
        // its parent opens).
        if t.tool == "task"
            && let Some(child) = part
                .tool_state_field("metadata")
                .and_then(|m| {
                    m.get("sessionId")
                        .and_then(|s| s.as_str())
                        .map(|id| crate::model::store::fleet::like(&part.session_id, id))
                })
                .and_then(|id| ctx.store.and_then(|s| s.session(&id)))
        {
            v ^= child.revision.rotate_left(32);
        }
    }
    v
}
