//! Reports: terminal text, Markdown/CSV, HTML, charts, comparisons, progress.

pub mod chart;
pub mod compare;
pub mod export;
pub mod html;
pub mod notes;
pub mod progress;
pub mod text;
