//! The in-process tests: reducer, rendering, snapshots, SQLite, the
//! archive's engines. One program, its helpers compiled once.

#[path = "../common/mod.rs"]
mod common;
#[path = "../support/mod.rs"]
mod support;

mod archive_layout;
mod archive_live;
mod archive_part_rows;
mod bounds;
mod cards;
mod cli_run;
mod diff_bands;
mod final_word;
mod fleet_list;
mod fleet_load;
mod layout_width;
mod markdown;
mod old_records;
mod player;
mod prompt_answers;
mod prompts;
mod property;
mod redraw_loop;
mod reducer;
mod reducer_parts;
mod search_view;
mod seen;
mod status_truth;
mod stream_lean;
mod stream_order;
mod theme_snapshots;
mod timeline;
mod todo_cards;
mod tui_snapshots;
mod untrusted_text;
mod usage_view;
mod verbs;
mod verbs_on_screen;
mod verbs_view;
