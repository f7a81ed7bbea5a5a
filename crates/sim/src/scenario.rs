//! Named presets: each is a guided experiment with a fixed, reproducible configuration.

use super::data::{DatasetKind, DatasetSpec};
use super::lab::{LabConfig, RunSpec};
use super::model::{ModelSpec, Norm};
use super::optim::{OptimizerSpec, ScheduleSpec};
use super::planner;
use super::regime::{ClipPlacement, LossNormalization, RegimeSpec, SchedulerPlacement, ZeroGradPlacement};
use super::SimError;

/// A preset experiment's name. Code that treats one preset differently matches on this, so a
/// misspelt preset is a compile error, not a branch that silently never runs; its text form
/// ([`ScenarioId::id`]) is what URLs, course files and messages hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ScenarioId {
    Scaling,
    ScalingAdam,
    Norms,
    VariableLength,
    Pitfalls,
    Memory,
}

impl ScenarioId {
    /// Every preset, in the course's order.
    pub const ALL: [ScenarioId; 6] = [
        ScenarioId::Scaling,
        ScenarioId::ScalingAdam,
        ScenarioId::Norms,
        ScenarioId::VariableLength,
        ScenarioId::Pitfalls,
        ScenarioId::Memory,
    ];

    pub const fn id(self) -> &'static str {
        match self {
            ScenarioId::Scaling => "scaling",
            ScenarioId::ScalingAdam => "scaling_adam",
            ScenarioId::Norms => "norms",
            ScenarioId::VariableLength => "variable_length",
            ScenarioId::Pitfalls => "pitfalls",
            ScenarioId::Memory => "memory",
        }
    }

    /// The preset named `id`, if there is one.
    pub fn from_id(id: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.id() == id)
    }
}

impl std::fmt::Display for ScenarioId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id())
    }
}

/// A preset experiment.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    pub id: ScenarioId,
    pub title: &'static str,
    /// One line on what the runs show.
    pub summary: &'static str,
    pub config: LabConfig,
}

/// Every preset's text form, in the course's order.
pub const SCENARIO_IDS: [&str; 6] = [
    ScenarioId::Scaling.id(),
    ScenarioId::ScalingAdam.id(),
    ScenarioId::Norms.id(),
    ScenarioId::VariableLength.id(),
    ScenarioId::Pitfalls.id(),
    ScenarioId::Memory.id(),
];

const ACCUMULATION: usize = 4;

fn run(label: &str, regime: RegimeSpec) -> RunSpec {
    RunSpec {
        label: label.into(),
        regime,
        ..RunSpec::default()
    }
}

fn scaling(optimizer: OptimizerSpec, learning_rate: f64) -> LabConfig {
    let runs = [
        run("full batch", RegimeSpec::full_batch()),
        run("accumulate 4, loss / 4", RegimeSpec::accumulate(ACCUMULATION)),
        run(
            "accumulate 4, unscaled",
            RegimeSpec::accumulate(ACCUMULATION).with_loss(LossNormalization::Unscaled),
        ),
    ]
    .map(|r| RunSpec {
        optimizer,
        schedule: ScheduleSpec::Constant { learning_rate },
        ..r
    });
    LabConfig {
        runs: runs.to_vec(),
        ..LabConfig::default()
    }
}

fn norms() -> LabConfig {
    let mut runs = Vec::new();
    for (name, norm) in [
        ("BatchNorm", Norm::batch_norm()),
        ("LayerNorm", Norm::layer_norm()),
        ("GroupNorm", Norm::group_norm(8)),
    ] {
        for (how, regime) in [
            ("full batch", RegimeSpec::full_batch()),
            ("accumulate 4", RegimeSpec::accumulate(ACCUMULATION)),
        ] {
            runs.push(RunSpec {
                label: format!("{name}, {how}"),
                model: ModelSpec {
                    norm,
                    ..ModelSpec::default()
                },
                regime,
                ..RunSpec::default()
            });
        }
    }
    LabConfig {
        runs,
        ..LabConfig::default()
    }
}

fn variable_length() -> LabConfig {
    let schedule = ScheduleSpec::Constant { learning_rate: 0.2 };
    let runs = vec![
        RunSpec {
            label: "full batch".into(),
            schedule,
            regime: RegimeSpec::full_batch().with_loss(LossNormalization::TotalItemCount),
            ..RunSpec::default()
        },
        RunSpec {
            label: "accumulate 4, mean of means".into(),
            schedule,
            regime: RegimeSpec::accumulate(ACCUMULATION),
            ..RunSpec::default()
        },
        RunSpec {
            label: "accumulate 4, / total tokens".into(),
            schedule,
            regime: RegimeSpec::accumulate(ACCUMULATION).with_loss(LossNormalization::TotalItemCount),
            ..RunSpec::default()
        },
    ];
    LabConfig {
        dataset: DatasetSpec {
            kind: DatasetKind::VariableLengthSequences,
            examples_per_class: 120,
            noise: 0.25,
            ..DatasetSpec::default()
        },
        batch_size: 32,
        runs,
        ..LabConfig::default()
    }
}

/// The clipping threshold of the pitfalls preset: below the accumulated gradient's norm for
/// almost the whole run (so the correct run clips at nearly every step), and below the partial
/// sums too, so clipping each micro-batch's partial sum turns the gradient during the whole run
/// rather than for a few steps (measured: 198 of 200 steps clipped; see the tests).
pub const PITFALLS_CLIP: f64 = 0.15;

fn pitfalls() -> LabConfig {
    let schedule = ScheduleSpec::WarmupCosine {
        learning_rate: 0.3,
        warmup_steps: 20,
        total_steps: 200,
        final_fraction: 0.0,
    };
    let correct = RegimeSpec::accumulate(ACCUMULATION);
    let forgotten = RegimeSpec {
        zero_grad: ZeroGradPlacement::Forgotten,
        ..correct
    };
    let clipped = [
        ("correct accumulation", correct),
        ("zero_grad forgotten", forgotten),
        (
            "zero_grad every micro-batch",
            RegimeSpec {
                zero_grad: ZeroGradPlacement::EveryMicroBatch,
                ..correct
            },
        ),
        (
            "clip every micro-batch",
            RegimeSpec {
                clip: ClipPlacement::EveryMicroBatch,
                ..correct
            },
        ),
        (
            "scheduler every micro-batch",
            RegimeSpec {
                scheduler: SchedulerPlacement::EveryMicroBatch,
                ..correct
            },
        ),
    ]
    .map(|(label, regime)| RunSpec {
        label: label.into(),
        schedule,
        regime,
        clip_max_norm: Some(PITFALLS_CLIP),
        ..RunSpec::default()
    });
    // Clipping rescales the gradient buffer in place, which caps a forgotten zero_grad's stale
    // sum; without clipping the sum grows step after step and the damage shows.
    let unclipped_forgotten = RunSpec {
        label: "zero_grad forgotten, no clipping".into(),
        schedule,
        regime: forgotten,
        ..RunSpec::default()
    };
    let mut runs = clipped.to_vec();
    runs.push(unclipped_forgotten);
    LabConfig {
        steps: 200,
        runs,
        ..LabConfig::default()
    }
}

/// What the planner picks for the memory experiment's batch within `budget_kib` KiB.
pub fn memory_budget_plan(budget_kib: u64) -> Result<planner::LabBudgetPlan, Box<planner::NothingFits>> {
    planner::plan_lab_budget(budget_kib.saturating_mul(1024), LabConfig::default().batch_size as u64)
}

/// The memory budget the memory experiment's last run is planned for, unless the learner
/// sets another.
pub const DEFAULT_MEMORY_BUDGET_KIB: u64 = 128;

fn memory() -> LabConfig {
    // The default budget fits (a test holds it), so this never falls back.
    memory_with_budget(DEFAULT_MEMORY_BUDGET_KIB).unwrap_or_else(|_| LabConfig::default())
}

/// The memory experiment with its last run planned for `budget_kib` KiB: full batch, 4 and 16
/// micro-batches, and as many micro-batches as the planner needs to fit the budget on either
/// engine (split as evenly as the batch allows, the loss divided by the step's item count, so
/// that its gradient stays the full batch's). Too small a budget is returned as what one
/// example needs.
pub fn memory_with_budget(budget_kib: u64) -> Result<LabConfig, Box<planner::NothingFits>> {
    let base = LabConfig::default();
    let plan = memory_budget_plan(budget_kib)?;
    let n = usize::try_from(plan.accumulation_steps).unwrap_or(usize::MAX);
    let mut runs: Vec<RunSpec> = [1, 4, 16]
        .map(|n| RunSpec {
            label: if n == 1 {
                "full batch".into()
            } else {
                format!("accumulate {n}")
            },
            regime: RegimeSpec::accumulate(n),
            ..RunSpec::default()
        })
        .to_vec();
    runs.push(RunSpec {
        label: format!("fits the budget: accumulate {n}"),
        regime: RegimeSpec {
            micro_batches: n,
            loss: LossNormalization::TotalItemCount,
            allow_uneven_split: true,
            ..RegimeSpec::default()
        },
        ..RunSpec::default()
    });
    Ok(LabConfig {
        steps: 50,
        runs,
        ..base
    })
}

/// The canonical benchmark workload: 3-class spiral, 300 points per class, MLP 2-64-64-3 ReLU,
/// SGD lr 0.1, B = 256, as one run with N micro-batches.
pub fn canonical_config(micro_batches: usize) -> LabConfig {
    LabConfig {
        batch_size: 256,
        runs: vec![RunSpec {
            // A count the batch does not split into is refused when the lab is built; the label
            // must not fail first.
            label: match 256usize.checked_div(micro_batches) {
                _ if micro_batches == 1 => "full batch 256".into(),
                Some(size) => format!("{micro_batches} x {size}"),
                None => format!("{micro_batches} micro-batches"),
            },
            schedule: ScheduleSpec::Constant { learning_rate: 0.1 },
            regime: RegimeSpec::accumulate(micro_batches),
            ..RunSpec::default()
        }],
        ..LabConfig::default()
    }
}

impl Scenario {
    /// Every preset, in the course's order.
    pub fn all() -> Vec<Scenario> {
        ScenarioId::ALL.into_iter().map(Self::of).collect()
    }

    /// The preset `id` names.
    pub fn of(id: ScenarioId) -> Scenario {
        match id {
            ScenarioId::Scaling => Scenario {
                id,
                title: "Full batch vs accumulated vs unscaled (SGD)",
                summary: "loss / N matches the full batch; the unscaled loss acts like an N-times learning rate",
                config: scaling(OptimizerSpec::default(), 0.5),
            },
            ScenarioId::ScalingAdam => Scenario {
                id,
                title: "The same with Adam",
                summary: "Adam divides by the gradient's own scale, so the unscaled loss barely matters",
                config: scaling(OptimizerSpec::adam(), 0.01),
            },
            ScenarioId::Norms => Scenario {
                id,
                title: "BatchNorm vs LayerNorm vs GroupNorm under accumulation",
                summary: "BatchNorm's statistics are per micro-batch, so its gradient no longer matches",
                config: norms(),
            },
            ScenarioId::VariableLength => Scenario {
                id,
                title: "Variable-length sequences",
                summary: "a mean of per-micro-batch means mis-weights tokens; divide by the total token count",
                config: variable_length(),
            },
            ScenarioId::Pitfalls => Scenario {
                id,
                title: "Pitfalls: zero_grad, clipping, scheduler",
                summary: "each misplaced call changes training; the correct version matches the full batch",
                config: pitfalls(),
            },
            ScenarioId::Memory => Scenario {
                id,
                title: "Activation memory",
                summary: "peak activation memory holds one micro-batch, not the full batch",
                config: memory(),
            },
        }
    }

    pub fn by_id(id: &str) -> Result<Scenario, SimError> {
        ScenarioId::from_id(id)
            .map(Self::of)
            .ok_or_else(|| SimError::UnknownScenario(id.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_scenario_is_valid_and_listed() {
        let all = Scenario::all();
        assert_eq!(all.iter().map(|s| s.id).collect::<Vec<_>>(), ScenarioId::ALL.to_vec());
        assert_eq!(all.iter().map(|s| s.id.id()).collect::<Vec<_>>(), SCENARIO_IDS.to_vec());
        for id in ScenarioId::ALL {
            assert_eq!(ScenarioId::from_id(id.id()), Some(id));
            assert_eq!(Scenario::of(id).id, id);
        }
        assert_eq!(ScenarioId::from_id("Scaling"), None);
        for scenario in all {
            scenario
                .config
                .validate()
                .unwrap_or_else(|e| panic!("{}: {e}", scenario.id));
        }
    }

    #[test]
    fn unknown_scenario_is_an_error() {
        assert_eq!(Scenario::by_id("nope"), Err(SimError::UnknownScenario("nope".into())));
    }
}
