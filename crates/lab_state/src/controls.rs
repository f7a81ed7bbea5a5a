//! The Lab's controls: what a learner can set, what is valid, and how it lives in the URL.

use super::engine_choice::EnginePreference;
use super::session::format_bytes;
use gradlab_i18n::Msg;
use gradlab_route::{bad_parameter, encode, UrlParams, SANDBOX};
use gradlab_sim::data::DatasetKind;
use gradlab_sim::lab::LabConfig;
use gradlab_sim::model::{Activation, Norm};
use gradlab_sim::optim::{OptimizerSpec, ScheduleSpec};
use gradlab_sim::regime::RegimeSpec;
use gradlab_sim::scenario::{memory_budget_plan, memory_with_budget, Scenario, ScenarioId, DEFAULT_MEMORY_BUDGET_KIB};

/// How a control is entered in the form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputKind {
    /// A select of these ids (each option's text is the message `<key>-<id>`).
    Choice(Vec<&'static str>),
    /// A whole number.
    Integer,
    /// A decimal number; a decimal comma is read as a point.
    Decimal,
    /// Free text (hidden widths such as `64-64`, an experiment's id).
    Text,
}

/// A value a control holds, with the one parser and formatter that the form and the URL share.
pub trait ControlValue: Sized {
    /// Reads the value from what a learner typed or a link holds (already trimmed).
    fn parse(text: &str) -> Result<Self, Msg>;
    /// The value as the form shows it and the URL holds it.
    fn format(&self) -> String;
    fn input() -> InputKind;
}

macro_rules! whole_number_values {
    ($($ty:ty),*) => {$(
        impl ControlValue for $ty {
            fn parse(text: &str) -> Result<Self, Msg> {
                text.parse().map_err(|_| Msg::new("control-error-number"))
            }
            fn format(&self) -> String {
                self.to_string()
            }
            fn input() -> InputKind {
                InputKind::Integer
            }
        }
    )*};
}
whole_number_values!(usize, u32, u64);

impl ControlValue for f64 {
    fn parse(text: &str) -> Result<Self, Msg> {
        text.replace(',', ".")
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| Msg::new("control-error-number"))
    }
    fn format(&self) -> String {
        format!("{self}")
    }
    fn input() -> InputKind {
        InputKind::Decimal
    }
}

/// An experiment's id; whether it names one is judged by [`LabControls::validate`].
impl ControlValue for String {
    fn parse(text: &str) -> Result<Self, Msg> {
        Ok(text.to_string())
    }
    fn format(&self) -> String {
        self.clone()
    }
    fn input() -> InputKind {
        InputKind::Text
    }
}

/// Hidden widths, `64-64`.
impl ControlValue for Vec<usize> {
    fn parse(text: &str) -> Result<Self, Msg> {
        text.split('-')
            .map(|w| w.trim().parse::<usize>())
            .collect::<Result<_, _>>()
            .map_err(|_| Msg::new("control-error-hidden-format"))
    }
    fn format(&self) -> String {
        self.iter().map(usize::to_string).collect::<Vec<_>>().join("-")
    }
    fn input() -> InputKind {
        InputKind::Text
    }
}

/// A control whose values are a fixed list, each with an id.
pub trait Choice: Copy + 'static {
    const ALL: &'static [Self];
    fn id(self) -> &'static str;
}

impl<T: Choice> ControlValue for T {
    fn parse(text: &str) -> Result<Self, Msg> {
        T::ALL.iter().copied().find(|c| c.id() == text).ok_or_else(|| {
            let ids: Vec<&str> = T::ALL.iter().map(|c| c.id()).collect();
            Msg::new("control-error-choice").arg("choices", ids.join(", "))
        })
    }
    fn format(&self) -> String {
        self.id().to_string()
    }
    fn input() -> InputKind {
        InputKind::Choice(T::ALL.iter().map(|c| c.id()).collect())
    }
}

impl Choice for DatasetKind {
    const ALL: &'static [Self] = &DatasetKind::ALL;
    fn id(self) -> &'static str {
        DatasetKind::id(self)
    }
}

impl Choice for Activation {
    const ALL: &'static [Self] = &Activation::ALL;
    fn id(self) -> &'static str {
        activation_id(self)
    }
}

/// In which experiments a control can be changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Editable {
    Always,
    /// Only in the sandbox: a preset fixes it.
    InSandbox,
    /// Only in this preset.
    InExperiment(ScenarioId),
}

/// A control's own range (combinations are checked by [`LabControls::validate`]).
#[derive(Debug, Clone, Copy)]
pub struct Bounds<T> {
    pub low: T,
    pub high: T,
    /// The message, with `low` and `high`, for a value outside.
    pub message: &'static str,
}

impl<T: PartialOrd + Copy + std::fmt::Display> Bounds<T> {
    fn check(&self, value: &T) -> Option<Msg> {
        (!(self.low..=self.high).contains(value))
            .then(|| Msg::new(self.message).arg("low", self.low).arg("high", self.high))
    }
}

/// The Lab's controls, declared once: each row names the control, its field and type (whose
/// [`ControlValue`] parses and formats it for the form and the URL), its default, its URL key,
/// where it is editable and its own range. The form, the URL round trip and validation all
/// follow from this table; a new control is one row here and its label in each `.ftl` file
/// (`control-<key>-label`, and `<key>-<id>` per option of a choice).
macro_rules! lab_controls {
    ($(
        $(#[$doc:meta])*
        $variant:ident, $field:ident: $ty:ty = $default:expr, $key:literal, $editable:expr
            $(, range $range:expr => $message:literal)?;
    )*) => {
        /// A control of the Lab, named as in the URL.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Control {
            $($(#[$doc])* $variant,)*
        }

        impl Control {
            /// Every control, in the table's order: the order in which a URL is read (the
            /// experiment first, the batch before its micro-batch count).
            pub const ALL: [Control; [$($key),*].len()] = [$(Control::$variant),*];

            /// The URL parameter of this control.
            pub fn key(self) -> &'static str {
                match self {
                    $(Control::$variant => $key,)*
                }
            }

            /// How the form enters this control.
            pub fn input(self) -> InputKind {
                match self {
                    $(Control::$variant => <$ty as ControlValue>::input(),)*
                }
            }

            fn editable(self) -> Editable {
                match self {
                    $(Control::$variant => $editable,)*
                }
            }
        }

        /// Everything a learner sets in the Lab; the sandbox's values when no scenario preset
        /// is used.
        #[derive(Debug, Clone, PartialEq)]
        pub struct LabControls {
            $($(#[$doc])* pub $field: $ty,)*
            /// Runs the learner switched off on the charts (indices, ascending); kept in the URL
            /// as `runs_off=1-3`, and not a training setting: switching never restarts training.
            pub runs_off: Vec<usize>,
        }

        impl Default for LabControls {
            fn default() -> Self {
                Self {
                    $($field: $default,)*
                    runs_off: Vec::new(),
                }
            }
        }

        impl LabControls {
            /// The value of `control` as the form shows it (and as the URL holds it).
            pub fn text_of(&self, control: Control) -> String {
                match control {
                    $(Control::$variant => self.$field.format(),)*
                }
            }

            fn set_text(&mut self, control: Control, text: &str) -> Result<(), Msg> {
                match control {
                    $(Control::$variant => self.$field = <$ty as ControlValue>::parse(text)?,)*
                }
                Ok(())
            }

            /// The message for a value outside its control's own range.
            fn bounds_error(&self, control: Control) -> Option<Msg> {
                match control {
                    $(Control::$variant => None $(.or_else(|| {
                        let (low, high) = $range;
                        Bounds { low, high, message: $message }.check(&self.$field)
                    }))?,)*
                }
            }
        }
    };
}

lab_controls! {
    /// The experiment: a preset's id, or `sandbox`.
    Scenario, scenario: String = "scaling".into(), "scenario", Editable::Always;
    Dataset, dataset: DatasetKind = DatasetKind::Spiral, "dataset", Editable::InSandbox;
    Hidden, hidden: Vec<usize> = vec![64, 64], "hidden", Editable::InSandbox;
    Activation, activation: Activation = Activation::Relu, "activation", Editable::InSandbox;
    Norm, norm: NormChoice = NormChoice::None, "norm", Editable::InSandbox;
    Optimizer, optimizer: OptimizerChoice = OptimizerChoice::Sgd, "optimizer", Editable::InSandbox;
    LearningRate, learning_rate: f64 = 0.5, "lr", Editable::InSandbox, range LEARNING_RATE_RANGE => "control-error-learning-rate";
    BatchSize, batch_size: usize = 256, "batch", Editable::InSandbox, range BATCH_RANGE => "control-error-batch";
    /// Its range is the simulation's own limit; its messages name the batch it splits.
    MicroBatches, micro_batches: usize = 4, "n", Editable::InSandbox;
    Seed, seed: u64 = 42, "seed", Editable::Always;
    StepsPerFrame, steps_per_frame: u32 = 2, "spf", Editable::Always, range STEPS_PER_FRAME_RANGE => "control-error-steps-per-frame";
    /// The memory experiment's budget (KiB), from which the planner picks its last run's N.
    MemoryBudget, memory_budget_kib: u64 = DEFAULT_MEMORY_BUDGET_KIB, "budget", Editable::InExperiment(ScenarioId::Memory);
}

/// Why a control's value cannot start a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControlError {
    pub control: Control,
    pub message: Msg,
}

/// Optimizer choices offered in the Lab (with their usual hyper-parameters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptimizerChoice {
    Sgd,
    Momentum,
    Adam,
    AdamW,
}

impl OptimizerChoice {
    pub const ALL: [OptimizerChoice; 4] = [
        OptimizerChoice::Sgd,
        OptimizerChoice::Momentum,
        OptimizerChoice::Adam,
        OptimizerChoice::AdamW,
    ];

    pub fn id(self) -> &'static str {
        match self {
            OptimizerChoice::Sgd => "sgd",
            OptimizerChoice::Momentum => "momentum",
            OptimizerChoice::Adam => "adam",
            OptimizerChoice::AdamW => "adamw",
        }
    }

    pub fn spec(self) -> OptimizerSpec {
        match self {
            OptimizerChoice::Sgd => OptimizerSpec::default(),
            OptimizerChoice::Momentum => OptimizerSpec::momentum(),
            OptimizerChoice::Adam => OptimizerSpec::adam(),
            OptimizerChoice::AdamW => OptimizerSpec::adamw(),
        }
    }
}

impl Choice for OptimizerChoice {
    const ALL: &'static [Self] = &OptimizerChoice::ALL;
    fn id(self) -> &'static str {
        OptimizerChoice::id(self)
    }
}

/// Normalization choices offered in the Lab.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NormChoice {
    None,
    BatchNorm,
    LayerNorm,
    GroupNorm,
}

impl NormChoice {
    pub const ALL: [NormChoice; 4] = [
        NormChoice::None,
        NormChoice::BatchNorm,
        NormChoice::LayerNorm,
        NormChoice::GroupNorm,
    ];

    pub fn id(self) -> &'static str {
        match self {
            NormChoice::None => "none",
            NormChoice::BatchNorm => "batch",
            NormChoice::LayerNorm => "layer",
            NormChoice::GroupNorm => "group",
        }
    }

    /// GroupNorm uses 4 groups (each hidden width must be divisible by 4).
    pub fn spec(self) -> Norm {
        match self {
            NormChoice::None => Norm::None,
            NormChoice::BatchNorm => Norm::batch_norm(),
            NormChoice::LayerNorm => Norm::layer_norm(),
            NormChoice::GroupNorm => Norm::group_norm(4),
        }
    }
}

impl Choice for NormChoice {
    const ALL: &'static [Self] = &NormChoice::ALL;
    fn id(self) -> &'static str {
        NormChoice::id(self)
    }
}

// The Lab's ranges. Each lies within what the simulation accepts (a test trains at every end
// of every range); the micro-batch count is the simulation's own limit, not a copy of it.
pub const LEARNING_RATE_RANGE: (f64, f64) = (1e-5, 10.0);
pub const BATCH_RANGE: (usize, usize) = (2, 512);
pub const MICRO_BATCH_RANGE: (usize, usize) = (1, gradlab_sim::regime::MAX_MICRO_BATCHES);
pub const STEPS_PER_FRAME_RANGE: (u32, u32) = (1, 50);
pub const MAX_HIDDEN_WIDTH: usize = 256;
pub const MAX_HIDDEN_LAYERS: usize = 4;
/// KiB: from what the planner may refuse (one example does not fit) to where the full batch
/// fits with room to spare.
pub const MEMORY_BUDGET_RANGE: (u64, u64) = (1, 4096);

pub fn activation_id(a: Activation) -> &'static str {
    match a {
        Activation::Relu => "relu",
        Activation::Tanh => "tanh",
        Activation::Gelu => "gelu",
    }
}

/// More runs than any experiment has; a larger index in `runs_off` is a bad parameter.
const MAX_RUNS_OFF_INDEX: usize = 15;

impl LabControls {
    /// Every problem with the current values, one entry per control; empty when a run can start.
    pub fn validate(&self) -> Vec<ControlError> {
        let mut errors = Vec::new();
        let mut fail = |control, message: Msg| errors.push(ControlError { control, message });
        if self.preset().is_none() && self.scenario != SANDBOX {
            fail(
                Control::Scenario,
                Msg::new("control-error-scenario").quoted("value", &self.scenario),
            );
        }
        if self.hidden.is_empty() || self.hidden.len() > MAX_HIDDEN_LAYERS {
            fail(
                Control::Hidden,
                Msg::new("control-error-hidden-count").arg("max", MAX_HIDDEN_LAYERS),
            );
        } else if let Some(&w) = self.hidden.iter().find(|&&w| w == 0 || w > MAX_HIDDEN_WIDTH) {
            fail(
                Control::Hidden,
                Msg::new("control-error-hidden-width")
                    .arg("max", MAX_HIDDEN_WIDTH)
                    .arg("width", w),
            );
        } else if self.norm == NormChoice::GroupNorm && self.hidden.iter().any(|w| w % 4 != 0) {
            fail(Control::Hidden, Msg::new("control-error-group-width"));
        }
        for control in Control::ALL {
            if let Some(message) = self.bounds_error(control) {
                fail(control, message);
            }
        }
        let (lo, hi) = MICRO_BATCH_RANGE;
        if self.micro_batches < lo {
            fail(Control::MicroBatches, Msg::new("control-error-n-zero"));
        } else if self.micro_batches > hi {
            fail(Control::MicroBatches, Msg::new("control-error-n-max").arg("max", hi));
        } else if self.micro_batches > self.batch_size {
            fail(
                Control::MicroBatches,
                Msg::new("control-error-n-too-large")
                    .arg("n", self.micro_batches)
                    .arg("batch", self.batch_size),
            );
        } else if !self.batch_size.is_multiple_of(self.micro_batches) {
            fail(
                Control::MicroBatches,
                Msg::new("control-error-not-divisible")
                    .arg("batch", self.batch_size)
                    .arg("n", self.micro_batches),
            );
        } else if self.norm == NormChoice::BatchNorm && self.batch_size / self.micro_batches < 2 {
            fail(Control::MicroBatches, Msg::new("control-error-batchnorm-micro"));
        }
        if self.preset() == Some(ScenarioId::Memory) {
            let (lo, hi) = MEMORY_BUDGET_RANGE;
            if !(lo..=hi).contains(&self.memory_budget_kib) {
                fail(
                    Control::MemoryBudget,
                    Msg::new("control-error-budget-range").arg("low", lo).arg("high", hi),
                );
            } else if let Err(why) = memory_with_budget(self.memory_budget_kib) {
                fail(
                    Control::MemoryBudget,
                    Msg::new("control-error-budget-nothing-fits")
                        .arg("needed", format_bytes(why.memory_bytes.total))
                        .arg("budget", format_bytes(why.memory_bytes.budget)),
                );
            }
        }
        errors
    }

    /// The message for one control, if its value is invalid.
    pub fn error_for(&self, control: Control) -> Option<Msg> {
        self.validate()
            .into_iter()
            .find(|e| e.control == control)
            .map(|e| e.message)
    }

    /// The query string that reproduces these controls: on a preset only what it lets the
    /// learner change, so that a link never carries settings that have no effect.
    pub fn to_query(&self) -> String {
        let mut body = String::from("view=lab");
        for control in Control::ALL.into_iter().filter(|c| self.is_editable(*c)) {
            body.push_str(&format!("&{}={}", control.key(), encode(&self.text_of(control))));
        }
        if !self.runs_off.is_empty() {
            let runs: Vec<String> = self.runs_off.iter().map(usize::to_string).collect();
            body.push_str(&format!("&runs_off={}", runs.join("-")));
        }
        format!("?{body}")
    }

    /// Switches run `run` on or off on the charts.
    pub fn toggle_run(&mut self, run: usize) {
        match self.runs_off.binary_search(&run) {
            Ok(i) => {
                self.runs_off.remove(i);
            }
            Err(i) => self.runs_off.insert(i, run),
        }
    }

    /// Another experiment: its runs are other runs, so every run is shown again.
    pub fn with_experiment(&self, experiment: &str) -> Self {
        Self {
            scenario: experiment.to_string(),
            runs_off: Vec::new(),
            ..self.clone()
        }
    }

    /// Reads controls from URL pairs. A missing parameter keeps its default; a malformed or
    /// out-of-range one falls back to its default and yields a notice naming it. Each value goes
    /// through the form's own parser ([`LabControls::with_text`]) and checks, in the order of
    /// [`Control::ALL`] (the experiment first, the batch before its micro-batch count).
    pub fn from_pairs(pairs: &[(String, String)]) -> (Self, Vec<Msg>) {
        let defaults = Self::default();
        let mut controls = defaults.clone();
        let mut notices = Vec::new();
        let params = UrlParams::new(pairs);
        let get = |key: &str| params.get(key);
        for control in Control::ALL {
            let Some(value) = get(control.key()) else { continue };
            match controls.with_text(control, value) {
                Ok(next) if next.accepts(control) => controls = next,
                _ => notices.push(bad_parameter(control.key(), value)),
            }
        }
        if let Some(v) = get("runs_off") {
            let runs: Option<Vec<usize>> = v.split('-').map(|r| r.parse().ok()).collect();
            match runs {
                Some(mut runs) if runs.iter().all(|&r| r <= MAX_RUNS_OFF_INDEX) => {
                    runs.sort_unstable();
                    runs.dedup();
                    controls.runs_off = runs;
                }
                _ => notices.push(bad_parameter("runs_off", v)),
            }
        }
        // A preset fixes everything but the seed and the pace: values for the rest are dropped
        // (the rewritten URL loses them too) and the learner is told which.
        if controls.scenario != SANDBOX {
            // Values already reported as invalid are not repeated here.
            let reported = |key: &str| {
                notices
                    .iter()
                    .any(|n| n.args.iter().any(|(name, value)| *name == "parameter" && value == key))
            };
            let fixed: Vec<&str> = Control::ALL
                .into_iter()
                .filter(|c| !controls.is_editable(*c) && get(c.key()).is_some() && !reported(c.key()))
                .map(Control::key)
                .collect();
            if !fixed.is_empty() {
                notices.push(
                    Msg::new("notice-preset-fixes")
                        .arg("scenario", &controls.scenario)
                        .arg("parameters", fixed.join(", ")),
                );
                controls = Self {
                    scenario: controls.scenario,
                    seed: controls.seed,
                    steps_per_frame: controls.steps_per_frame,
                    memory_budget_kib: controls.memory_budget_kib,
                    runs_off: controls.runs_off,
                    ..defaults.clone()
                };
            }
        }
        // A combination no single value was refused for (GroupNorm with widths read before it
        // that 4 does not divide, a batch smaller than the micro-batch count left at its
        // default) also falls back, so a link never blocks the page. A value that breaks a rule
        // with controls read before it (BatchNorm with one example per micro-batch: `n` after
        // `norm`) was refused on its own above.
        if !controls.validate().is_empty() {
            notices.push(Msg::new("notice-bad-combination"));
            controls = defaults;
        }
        (controls, notices)
    }

    /// Whether `control`'s own value is one a link may set: within its range (the budget also
    /// one that something fits in, whatever the experiment); combinations of controls are judged
    /// once all are read.
    fn accepts(&self, control: Control) -> bool {
        match control {
            Control::MemoryBudget => {
                let (lo, hi) = MEMORY_BUDGET_RANGE;
                (lo..=hi).contains(&self.memory_budget_kib) && memory_with_budget(self.memory_budget_kib).is_ok()
            }
            _ => self.error_for(control).is_none(),
        }
    }

    /// The preset these controls run, or none in the sandbox (or for an unknown id, which
    /// [`LabControls::validate`] reports).
    pub fn preset(&self) -> Option<ScenarioId> {
        ScenarioId::from_id(&self.scenario)
    }

    /// These controls with `control` set from the text a learner typed or chose, read by the
    /// control's one parser (its type's [`ControlValue`]). Text that is not a value at all
    /// (letters for a number) is an error here; values out of range are accepted and reported by
    /// [`LabControls::validate`], next to the control.
    pub fn with_text(&self, control: Control, text: &str) -> Result<Self, Msg> {
        let mut next = self.clone();
        next.set_text(control, text.trim())?;
        if control == Control::Scenario {
            // Another experiment's runs are other runs: every run is shown again.
            next.runs_off.clear();
        }
        Ok(next)
    }

    /// The sandbox experiment these controls describe: full batch, accumulate N with loss / N,
    /// and accumulate N unscaled, side by side from the same initialization and data order.
    pub fn sandbox_config(&self) -> LabConfig {
        let base = gradlab_sim::lab::RunSpec {
            model: gradlab_sim::model::ModelSpec {
                hidden: self.hidden.clone(),
                activation: self.activation,
                norm: self.norm.spec(),
            },
            optimizer: self.optimizer.spec(),
            schedule: ScheduleSpec::Constant {
                learning_rate: self.learning_rate,
            },
            ..gradlab_sim::lab::RunSpec::default()
        };
        let n = self.micro_batches;
        let runs = vec![
            gradlab_sim::lab::RunSpec {
                label: "full batch".into(),
                regime: RegimeSpec::full_batch(),
                ..base.clone()
            },
            gradlab_sim::lab::RunSpec {
                label: format!("accumulate {n}, loss / {n}"),
                regime: RegimeSpec::accumulate(n),
                ..base.clone()
            },
            gradlab_sim::lab::RunSpec {
                label: format!("accumulate {n}, unscaled"),
                regime: RegimeSpec::accumulate(n).with_loss(gradlab_sim::regime::LossNormalization::Unscaled),
                ..base
            },
        ];
        let mut config = LabConfig {
            batch_size: self.batch_size,
            init_seed: self.seed,
            runs,
            ..LabConfig::default()
        };
        config.dataset.kind = self.dataset;
        config
    }

    /// The experiment to run: the scenario's preset (with the chosen seed of the initial
    /// weights), or the sandbox.
    pub fn lab_config(&self) -> LabConfig {
        self.preset().map(Scenario::of).map_or_else(
            || self.sandbox_config(),
            |s| {
                let config = if s.id == ScenarioId::Memory {
                    // An invalid budget is reported by `validate`; until then the preset's own.
                    memory_with_budget(self.memory_budget_kib).unwrap_or(s.config)
                } else {
                    s.config
                };
                LabConfig {
                    init_seed: self.seed,
                    ..config
                }
            },
        )
    }

    /// The planner's choice for the memory experiment's budget, in words: none in another
    /// experiment, or while nothing fits (the budget's field says why).
    pub fn memory_plan_text(&self) -> Option<Msg> {
        if self.preset() != Some(ScenarioId::Memory) {
            return None;
        }
        let plan = memory_budget_plan(self.memory_budget_kib).ok()?;
        Some(
            Msg::new("memory-budget-plan")
                .arg("n", plan.accumulation_steps)
                .arg("micro", plan.micro_batch)
                .arg("budget", format_bytes(self.memory_budget_kib.saturating_mul(1024)))
                .arg("cpu", format_bytes(plan.cpu.total))
                .arg("gpu", format_bytes(plan.webgpu.total)),
        )
    }

    /// Whether a control can be changed in the current experiment: presets fix everything but
    /// the seed and the pace.
    pub fn is_editable(&self, control: Control) -> bool {
        match control.editable() {
            Editable::Always => true,
            Editable::InSandbox => self.scenario == SANDBOX,
            Editable::InExperiment(id) => self.preset() == Some(id),
        }
    }

    /// Sandbox controls that start from a preset's first run and shared settings.
    pub fn sandbox_from(&self, config: &LabConfig) -> Self {
        let Some(run) = config.runs.first() else {
            return Self {
                scenario: SANDBOX.into(),
                ..self.clone()
            };
        };
        let norm = match run.model.norm {
            Norm::None => NormChoice::None,
            Norm::BatchNorm { .. } => NormChoice::BatchNorm,
            Norm::LayerNorm { .. } => NormChoice::LayerNorm,
            Norm::GroupNorm { .. } => NormChoice::GroupNorm,
        };
        let optimizer = match run.optimizer {
            OptimizerSpec::Sgd { .. } => OptimizerChoice::Sgd,
            OptimizerSpec::Momentum { .. } => OptimizerChoice::Momentum,
            OptimizerSpec::Adam { .. } => OptimizerChoice::Adam,
            OptimizerSpec::AdamW { .. } => OptimizerChoice::AdamW,
        };
        let learning_rate = match run.schedule {
            ScheduleSpec::Constant { learning_rate } | ScheduleSpec::WarmupCosine { learning_rate, .. } => {
                learning_rate
            }
        };
        let micro_batches = config.runs.iter().map(|r| r.regime.micro_batches).max().unwrap_or(1);
        let candidate = Self {
            scenario: SANDBOX.into(),
            dataset: config.dataset.kind,
            hidden: run.model.hidden.clone(),
            activation: run.model.activation,
            norm,
            optimizer,
            learning_rate,
            batch_size: config.batch_size,
            micro_batches,
            seed: config.init_seed,
            steps_per_frame: self.steps_per_frame,
            memory_budget_kib: self.memory_budget_kib,
            runs_off: Vec::new(),
        };
        if candidate.validate().is_empty() {
            candidate
        } else {
            Self {
                scenario: SANDBOX.into(),
                ..Self::default()
            }
        }
    }
}

/// How the Lab runs beyond its controls: `engine=cpu` or `engine=gpu` force an engine (by
/// default the faster one on this machine trains), and `simulate=gpu-loss` (for tests and
/// demonstrations) loses the WebGPU device mid-run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EngineOptions {
    pub engine: EnginePreference,
    pub simulate_gpu_loss: bool,
}

impl EngineOptions {
    pub fn from_pairs(pairs: &[(String, String)]) -> (Self, Vec<Msg>) {
        let params = UrlParams::new(pairs);
        let get = |key: &str| params.get(key);
        let mut notices = Vec::new();
        let mut bad = |parameter: &'static str, value: &str| notices.push(bad_parameter(parameter, value));
        let engine = match get("engine") {
            None | Some("auto" | "faster") => EnginePreference::Faster,
            Some("cpu") => EnginePreference::Cpu,
            Some("gpu" | "webgpu") => EnginePreference::Gpu,
            Some(other) => {
                bad("engine", other);
                EnginePreference::Faster
            }
        };
        let simulate_gpu_loss = match get("simulate") {
            None => false,
            Some("gpu-loss") => true,
            Some(other) => {
                bad("simulate", other);
                false
            }
        };
        (
            Self {
                engine,
                simulate_gpu_loss,
            },
            notices,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gradlab_i18n::Localizer;

    fn english(message: Option<Msg>) -> String {
        Localizer::english().msg(&message.expect("an error message"))
    }

    fn pairs(query: &str) -> Vec<(String, String)> {
        query
            .trim_start_matches('?')
            .split('&')
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn defaults_are_valid_and_round_trip_through_the_url() {
        let controls = LabControls::default();
        assert!(controls.validate().is_empty());
        let (back, notices) = LabControls::from_pairs(&pairs(&controls.to_query()));
        assert_eq!(back, controls);
        assert!(notices.is_empty());
        let other = LabControls {
            scenario: "sandbox".into(),
            dataset: DatasetKind::TwoMoons,
            hidden: vec![32, 16, 8],
            activation: Activation::Gelu,
            norm: NormChoice::LayerNorm,
            optimizer: OptimizerChoice::AdamW,
            learning_rate: 0.003,
            batch_size: 96,
            micro_batches: 3,
            seed: 7,
            steps_per_frame: 10,
            memory_budget_kib: DEFAULT_MEMORY_BUDGET_KIB,
            runs_off: vec![0, 2],
        };
        assert!(other.to_query().ends_with("&runs_off=0-2"));
        assert_eq!(LabControls::from_pairs(&pairs(&other.to_query())).0, other);
    }

    /// A link's value goes through the form's parser: what the form accepts (a decimal comma,
    /// spaces around widths) a link accepts too, and what it refuses is one notice per parameter.
    #[test]
    fn links_and_the_form_read_values_alike() {
        let (controls, notices) = LabControls::from_pairs(&pairs("?scenario=sandbox&lr=0,05&hidden=32- 16"));
        assert!(notices.is_empty(), "{notices:?}");
        assert_eq!(controls.learning_rate, 0.05);
        assert_eq!(controls.hidden, vec![32, 16]);
        let form = LabControls::default()
            .with_text(Control::Scenario, SANDBOX)
            .and_then(|c| c.with_text(Control::LearningRate, "0,05"))
            .and_then(|c| c.with_text(Control::Hidden, "32- 16"))
            .unwrap();
        assert_eq!(controls, form);
        for control in Control::ALL {
            // The experiment itself is the only parameter then.
            let query = match control {
                Control::Scenario => "?scenario=%%bad".to_string(),
                _ => format!("?scenario=sandbox&{}=%%bad", control.key()),
            };
            let (_, notices) = LabControls::from_pairs(&pairs(&query));
            assert_eq!(
                notices,
                vec![bad_parameter(control.key(), "%%bad")],
                "{}",
                control.key()
            );
        }
    }

    /// The memory experiment's budget: in its URL, editable there only, picking the last run's
    /// N through the planner; a budget nothing fits in is named, in the URL and in the form.
    #[test]
    fn the_memory_budget_picks_the_last_runs_n() {
        let n = |controls: &LabControls| controls.lab_config().runs[3].regime.micro_batches;
        let (controls, notices) = LabControls::from_pairs(&pairs("?scenario=memory&budget=64"));
        assert!(notices.is_empty(), "{notices:?}");
        assert_eq!(controls.memory_budget_kib, 64);
        assert!(controls.to_query().contains("&budget=64"));
        let lower = n(&controls);
        let higher = n(&controls.with_text(Control::MemoryBudget, "256").unwrap());
        assert!(
            lower > higher,
            "a smaller budget, more micro-batches: {lower} against {higher}"
        );
        assert_eq!(n(&controls.with_text(Control::MemoryBudget, "4096").unwrap()), 1);
        assert!(controls.is_editable(Control::MemoryBudget));
        assert!(!controls.with_experiment("scaling").is_editable(Control::MemoryBudget));
        assert!(!controls.with_experiment(SANDBOX).is_editable(Control::MemoryBudget));
        assert!(!LabControls::default().to_query().contains("budget"));
        assert_eq!(LabControls::default().memory_plan_text(), None);
        let text = controls.memory_plan_text().unwrap();
        assert_eq!(text.id, "memory-budget-plan");
        assert!(
            text.args.iter().any(|(k, v)| *k == "n" && *v == lower.to_string()),
            "{text:?}"
        );
        let too_small = controls.with_text(Control::MemoryBudget, "20").unwrap();
        assert_eq!(too_small.memory_plan_text(), None);
        assert_eq!(
            too_small.error_for(Control::MemoryBudget).map(|m| m.id),
            Some("control-error-budget-nothing-fits".into())
        );
        assert!(controls.with_text(Control::MemoryBudget, "lots").is_err());
        for bad in ["0", "20", "99999", "abc", "-5"] {
            let (controls, notices) = LabControls::from_pairs(&pairs(&format!("?scenario=memory&budget={bad}")));
            assert_eq!(controls.scenario, "memory", "{bad}: the experiment stays");
            assert_eq!(controls.memory_budget_kib, DEFAULT_MEMORY_BUDGET_KIB, "{bad}");
            assert!(
                notices
                    .iter()
                    .any(|m| m.args.iter().any(|(k, v)| *k == "parameter" && v == "budget")),
                "{bad}: {notices:?}"
            );
        }
    }

    #[test]
    fn runs_switched_off_toggle_survive_a_preset_and_reset_with_another_experiment() {
        let mut controls = LabControls::from_pairs(&pairs("?scenario=norms&runs_off=4-1-4")).0;
        assert_eq!(controls.runs_off, vec![1, 4]);
        controls.toggle_run(1);
        controls.toggle_run(3);
        assert_eq!(controls.runs_off, vec![3, 4]);
        assert!(controls.with_experiment("scaling").runs_off.is_empty());
        let from_the_form = controls.with_text(Control::Scenario, "pitfalls").unwrap();
        assert!(from_the_form.scenario == "pitfalls" && from_the_form.runs_off.is_empty());
        for bad in ["x", "1-", "99", "-1"] {
            let (controls, notices) = LabControls::from_pairs(&pairs(&format!("?scenario=norms&runs_off={bad}")));
            assert!(controls.runs_off.is_empty(), "{bad}");
            assert_eq!(
                notices,
                vec![Msg::new("notice-bad-parameter")
                    .quoted("value", bad)
                    .arg("parameter", "runs_off")],
                "{bad}"
            );
        }
    }

    #[test]
    fn engine_options_are_read_and_unknown_values_reported() {
        assert_eq!(EngineOptions::from_pairs(&[]), (EngineOptions::default(), Vec::new()));
        let (options, notices) = EngineOptions::from_pairs(&pairs("?engine=cpu&simulate=gpu-loss"));
        assert!(options.engine == EnginePreference::Cpu && options.simulate_gpu_loss);
        assert_eq!(
            EngineOptions::from_pairs(&pairs("?engine=gpu")).0.engine,
            EnginePreference::Gpu
        );
        assert_eq!(
            EngineOptions::from_pairs(&pairs("?engine=webgpu")).0.engine,
            EnginePreference::Gpu
        );
        assert!(notices.is_empty());
        let (options, notices) = EngineOptions::from_pairs(&pairs("?engine=quantum&simulate=meteor"));
        assert_eq!(options, EngineOptions::default());
        assert_eq!(
            notices,
            vec![
                Msg::new("notice-bad-parameter")
                    .quoted("value", "quantum")
                    .arg("parameter", "engine"),
                Msg::new("notice-bad-parameter")
                    .quoted("value", "meteor")
                    .arg("parameter", "simulate"),
            ]
        );
    }

    #[test]
    fn a_preset_drops_the_settings_it_fixes_and_says_so() {
        let (controls, notices) =
            LabControls::from_pairs(&pairs("?scenario=norms&lr=2&batch=128&hidden=8-8&seed=9&spf=3"));
        assert_eq!(
            controls,
            LabControls {
                scenario: "norms".into(),
                seed: 9,
                steps_per_frame: 3,
                ..LabControls::default()
            }
        );
        assert_eq!(
            notices,
            vec![Msg::new("notice-preset-fixes")
                .arg("scenario", "norms")
                .arg("parameters", "hidden, lr, batch")]
        );
        assert_eq!(controls.to_query(), "?view=lab&scenario=norms&seed=9&spf=3");
        let (_, notices) = LabControls::from_pairs(&pairs("?scenario=norms&seed=9"));
        assert!(notices.is_empty(), "the seed is the preset's to change");
    }

    #[test]
    fn invalid_combinations_are_explained_per_control() {
        let controls = LabControls {
            batch_size: 100,
            micro_batches: 3,
            ..LabControls::default()
        };
        let message = english(controls.error_for(Control::MicroBatches));
        assert!(message.contains("not divisible"), "{message}");
        let too_many = LabControls {
            batch_size: 8,
            micro_batches: 16,
            ..LabControls::default()
        };
        assert!(english(too_many.error_for(Control::MicroBatches)).contains("larger than B"));
        let lr = LabControls {
            learning_rate: 50.0,
            ..LabControls::default()
        };
        assert!(lr.error_for(Control::LearningRate).is_some());
        let group = LabControls {
            norm: NormChoice::GroupNorm,
            hidden: vec![30],
            ..LabControls::default()
        };
        assert!(english(group.error_for(Control::Hidden)).contains("multiple of 4"));
        let bn = LabControls {
            norm: NormChoice::BatchNorm,
            batch_size: 8,
            micro_batches: 8,
            ..LabControls::default()
        };
        assert!(english(bn.error_for(Control::MicroBatches)).contains("at least 2"));
    }

    #[test]
    fn malformed_url_values_fall_back_with_a_notice() {
        let (controls, notices) =
            LabControls::from_pairs(&pairs("?lr=abc&batch=99999&n=7&hidden=64-x&norm=nope&spf=0"));
        assert_eq!(controls, LabControls::default());
        assert_eq!(notices.len(), 6, "{notices:?}");
        let en = Localizer::english();
        assert!(notices
            .iter()
            .map(|n| en.msg(n))
            .any(|n| n.contains("\"\u{2068}abc\u{2069}\"") && n.contains("lr")));
        let (controls, notices) = LabControls::from_pairs(&pairs("?norm=group&hidden=30&scenario=sandbox"));
        assert_eq!(controls, LabControls::default());
        assert!(notices.iter().any(|n| en.msg(n).contains("cannot be combined")));
    }

    #[test]
    fn every_valid_control_set_builds_a_valid_lab() {
        for norm in NormChoice::ALL {
            for optimizer in OptimizerChoice::ALL {
                for n in [1, 2, 4, 8] {
                    let controls = LabControls {
                        scenario: "sandbox".into(),
                        norm,
                        optimizer,
                        micro_batches: n,
                        ..LabControls::default()
                    };
                    assert!(controls.validate().is_empty());
                    controls.lab_config().validate().unwrap();
                }
            }
        }
        let preset = LabControls::default().lab_config();
        assert_eq!(preset, Scenario::by_id("scaling").unwrap().config);
        let reseeded = LabControls {
            seed: 5,
            ..LabControls::default()
        };
        assert_eq!(reseeded.lab_config().init_seed, 5);
    }

    /// The Lab never offers what the engines refuse: every end of every control's range
    /// (largest network, largest batch with the most micro-batches, smallest of each) trains.
    #[test]
    fn every_end_of_every_range_trains() {
        use gradlab_sim::lab::CpuLab;
        let (b_lo, b_hi) = BATCH_RANGE;
        let (n_lo, n_hi) = MICRO_BATCH_RANGE;
        let (lr_lo, lr_hi) = LEARNING_RATE_RANGE;
        let (spf_lo, spf_hi) = STEPS_PER_FRAME_RANGE;
        let widest = vec![MAX_HIDDEN_WIDTH; MAX_HIDDEN_LAYERS];
        let mut cases = Vec::new();
        for norm in NormChoice::ALL {
            let smallest_width = if norm == NormChoice::GroupNorm { 4 } else { 1 };
            cases.push((norm, widest.clone(), b_hi, n_hi, lr_hi, spf_hi));
            cases.push((norm, vec![smallest_width], b_hi, n_lo, lr_lo, spf_lo));
            cases.push((norm, vec![smallest_width], b_lo, n_lo, lr_hi, spf_lo));
        }
        cases.push((NormChoice::None, vec![8], b_lo, b_lo, lr_lo, spf_hi));
        for (norm, hidden, batch_size, micro_batches, learning_rate, steps_per_frame) in cases {
            let controls = LabControls {
                scenario: SANDBOX.into(),
                norm,
                hidden,
                batch_size,
                micro_batches,
                learning_rate,
                steps_per_frame,
                ..LabControls::default()
            };
            assert!(
                controls.validate().is_empty(),
                "{controls:?}: {:?}",
                controls.validate()
            );
            let mut lab = CpuLab::<f32>::cpu(controls.lab_config())
                .unwrap_or_else(|e| panic!("{controls:?} is offered but refused: {e}"));
            lab.step()
                .unwrap_or_else(|e| panic!("{controls:?} is offered but does not train: {e}"));
            let (controls, notices) = LabControls::from_pairs(&pairs(&controls.to_query()));
            assert!(notices.is_empty(), "{notices:?}");
            assert!(controls.validate().is_empty());
        }
    }

    #[test]
    fn more_micro_batches_than_the_engines_take_is_a_field_error() {
        let en = Localizer::english();
        let (_, n_hi) = MICRO_BATCH_RANGE;
        let controls = LabControls {
            scenario: SANDBOX.into(),
            batch_size: 512,
            micro_batches: 512,
            ..LabControls::default()
        };
        let message = en.msg(&controls.error_for(Control::MicroBatches).unwrap());
        assert!(message.contains(&format!("at most {n_hi}")), "{message}");
        assert!(
            controls.lab_config().validate().is_err(),
            "the simulation refuses it too"
        );
        // From the URL: the notice names N, and B is kept.
        let (controls, notices) = LabControls::from_pairs(&pairs("?scenario=sandbox&batch=512&n=512"));
        assert_eq!(controls.batch_size, 512);
        assert_eq!(controls.micro_batches, LabControls::default().micro_batches);
        assert_eq!(notices.len(), 1);
        assert!(en.msg(&notices[0]).contains("for n;"), "{}", en.msg(&notices[0]));
    }

    /// The table: one key per control, the form's input following each value's type, a choice
    /// that names its options when a value is none of them, and each row's editability.
    #[test]
    fn the_table_declares_each_control_once() {
        let keys: Vec<&str> = Control::ALL.iter().map(|c| c.key()).collect();
        let mut unique = keys.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), keys.len(), "{keys:?}");
        assert_eq!(Control::LearningRate.input(), InputKind::Decimal);
        assert_eq!(Control::BatchSize.input(), InputKind::Integer);
        assert_eq!(Control::Hidden.input(), InputKind::Text);
        assert_eq!(
            Control::Norm.input(),
            InputKind::Choice(vec!["none", "batch", "layer", "group"])
        );
        let refused = LabControls::default()
            .with_text(Control::Optimizer, "lion")
            .unwrap_err();
        assert_eq!(
            Localizer::english().msg(&refused),
            "choose one of: sgd, momentum, adam, adamw"
        );
        let preset = LabControls::default();
        let sandbox = preset.with_text(Control::Scenario, SANDBOX).unwrap();
        let memory = preset.with_text(Control::Scenario, ScenarioId::Memory.id()).unwrap();
        for control in Control::ALL {
            let (in_preset, in_sandbox, in_memory) = (
                preset.is_editable(control),
                sandbox.is_editable(control),
                memory.is_editable(control),
            );
            match control {
                Control::Scenario | Control::Seed | Control::StepsPerFrame => {
                    assert!(in_preset && in_sandbox && in_memory, "{control:?}")
                }
                Control::MemoryBudget => assert!(!in_preset && !in_sandbox && in_memory),
                _ => assert!(!in_preset && in_sandbox && !in_memory, "{control:?}"),
            }
        }
        // A range declared in the table is checked by `validate`, beside its control.
        let slow = sandbox.with_text(Control::StepsPerFrame, "51").unwrap();
        assert!(english(slow.error_for(Control::StepsPerFrame)).contains("1 to 50"));
    }

    #[test]
    fn typed_text_updates_one_control_or_says_what_is_wrong() {
        let controls = LabControls::default();
        for control in Control::ALL {
            assert_eq!(
                controls.with_text(control, &controls.text_of(control)).unwrap(),
                controls
            );
        }
        let changed = controls.with_text(Control::BatchSize, " 90 ").unwrap();
        assert_eq!(changed.batch_size, 90);
        assert!(english(changed.error_for(Control::MicroBatches)).contains("not divisible"));
        assert_eq!(
            controls.with_text(Control::LearningRate, "0,25").unwrap().learning_rate,
            0.25
        );
        for (control, text) in [
            (Control::LearningRate, "fast"),
            (Control::LearningRate, "inf"),
            (Control::BatchSize, "-3"),
            (Control::Seed, "1.5"),
            (Control::Hidden, "64-"),
        ] {
            assert!(controls.with_text(control, text).is_err(), "{text}");
        }
        assert_eq!(
            controls.with_text(Control::Hidden, "32-16").unwrap().hidden,
            vec![32, 16]
        );
        let too_wide = controls.with_text(Control::Hidden, "1000").unwrap();
        assert!(too_wide.error_for(Control::Hidden).is_some());
    }

    #[test]
    fn presets_fix_their_settings_and_copy_into_the_sandbox() {
        let preset = LabControls {
            scenario: "scaling_adam".into(),
            ..LabControls::default()
        };
        assert!(!preset.is_editable(Control::LearningRate));
        assert!(preset.is_editable(Control::Seed));
        let sandbox = preset.sandbox_from(&preset.lab_config());
        assert_eq!(sandbox.scenario, SANDBOX);
        assert!(sandbox.is_editable(Control::LearningRate));
        assert_eq!(sandbox.optimizer, OptimizerChoice::Adam);
        assert_eq!(sandbox.learning_rate, 0.01);
        assert_eq!(sandbox.micro_batches, 4);
        assert!(sandbox.validate().is_empty());
        // The sandbox then runs the preset's own three regimes.
        let runs = sandbox.lab_config().runs;
        let preset_runs = preset.lab_config().runs;
        assert_eq!(
            runs.iter().map(|r| r.regime).collect::<Vec<_>>(),
            preset_runs.iter().map(|r| r.regime).collect::<Vec<_>>()
        );
        for id in ScenarioId::ALL {
            let controls = LabControls {
                scenario: id.id().into(),
                ..LabControls::default()
            };
            assert!(
                controls.sandbox_from(&controls.lab_config()).validate().is_empty(),
                "{id}"
            );
        }
    }
}
