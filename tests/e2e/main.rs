//! The tests that spawn something: the ocview binary (in tmux or a pty),
//! the real opencode server, PostgreSQL. One program, its helpers compiled
//! once; .config/nextest.toml keeps them from crowding each other.

#[path = "../common/mod.rs"]
mod common;
#[path = "../../benches/common/mod.rs"]
mod recordings;
#[path = "../support/mod.rs"]
mod support;

mod archive;
mod archive_block_documents;
mod archive_blocks;
mod archive_crash;
mod archive_file;
mod archive_import_db;
mod archive_limits;
mod archive_list;
mod archive_list_notify;
mod archive_list_viewers;
mod archive_migrate;
mod archive_one_id;
mod archive_opencode_db_switch;
mod archive_origins;
mod archive_pg_upgrade;
mod archive_private_files;
mod archive_progress_tmux;
mod archive_prune_imports;
mod archive_search;
mod archive_search_tmux;
mod archive_team;
mod archive_team_roles;
mod archive_tls;
mod bad_input;
mod demo;
mod discovery_quiet;
mod durable;
mod e2e_abort;
mod e2e_archive;
mod e2e_discover;
mod e2e_fleet;
mod e2e_formats;
mod e2e_history;
mod e2e_idle;
mod e2e_live;
mod e2e_message_total;
mod e2e_opencode_db;
mod e2e_paging;
mod e2e_prompts;
mod e2e_record;
mod e2e_seen;
mod e2e_status;
mod e2e_tmux;
mod e2e_usage_stats;
mod errors;
mod errors_files;
mod export;
mod first_hour;
mod fixtures_replay;
mod fleet_replay;
mod headless_memory;
mod history_bad_db;
mod history_db;
mod history_tmux;
mod job_control;
mod layering;
mod layout_tmux;
mod lean_start;
mod live_paging;
mod live_reconnect_pages;
mod live_search_progress;
mod memory;
mod opencode_db;
mod own_servers;
mod plain;
mod prompt_tmux;
mod readme;
mod records_totals;
mod session_flag;
mod shapes;
mod theme_opencode;
mod theme_terminal;
mod tmux;
mod tmux_on_screen;
mod tmux_verbs;
mod usage_tmux;
mod verbs_tmux;
