//! Plain state types of the interactive Lab (no Leptos, no wgpu): the controls a learner sets,
//! their validation with a message per control, and their round trip through the URL, so a
//! shared link reproduces an experiment; the view of a running experiment (histories, charts,
//! results, memory); which engine is faster here; and the message ids of each experiment's texts. The Lab's components are
//! thin views over these.

pub mod boundary_history;
pub mod chart_text;
pub mod controls;
pub mod course;
pub mod engine_choice;
pub mod experience;
pub mod gpt_controls;
pub mod gpt_view;
pub mod numbers;
pub mod plan_form;
pub mod session;
pub mod step_through;
pub mod texts;
