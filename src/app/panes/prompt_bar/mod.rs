//! The prompt bar: one queue of every pending permission and question,
//! the keys that answer them, when a prompt may take keys, and its drawing.

pub mod answers;
pub mod audit;
pub mod draw;
pub mod draw_keys;
pub mod draw_permission;
pub mod draw_question;
pub mod focus;
pub mod keys;
pub mod question_keys;
pub mod questions;
pub mod view;
pub mod wait;
