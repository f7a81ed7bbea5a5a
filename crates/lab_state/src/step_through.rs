//! The step-through view as plain state: one optimizer step replayed phase by phase from the
//! traces the engine took ([`StepTrace`]), what each run shows at each phase, its activation
//! memory over the step, and its PyTorch training loop with the line being executed.
//!
//! The phases are one timeline for all runs: micro-batch k = 1..K (K the most micro-batches of
//! any run) as forward, loss and backward, then clipping (when a run clips the whole gradient),
//! the optimizer step and zero_grad. A run with fewer micro-batches than K is idle after its
//! last one: the full batch does one big forward and backward at k = 1.

use gradlab_i18n::Msg;
use gradlab_sim::lab::RunSpec;
use gradlab_sim::optim::ScheduleSpec;
use gradlab_sim::regime::{ClipPlacement, LossNormalization, SchedulerPlacement, ZeroGradPlacement};
use gradlab_sim::trace::{PartialSum, StepTrace};

/// One phase of the replayed step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Micro-batch `k` (0-based) forward: its activations are held.
    Forward(usize),
    /// Its loss, weighted.
    Loss(usize),
    /// Its backward: activations freed, its gradient added to the buffer.
    Backward(usize),
    /// The whole accumulated gradient clipped.
    Clip,
    OptimizerStep,
    ZeroGrad,
}

impl Phase {
    /// The phase's name, for the announcement and the phase heading.
    pub fn name(self) -> Msg {
        match self {
            Phase::Forward(k) => Msg::new("step-phase-forward").arg("k", k + 1),
            Phase::Loss(k) => Msg::new("step-phase-loss").arg("k", k + 1),
            Phase::Backward(k) => Msg::new("step-phase-backward").arg("k", k + 1),
            Phase::Clip => Msg::new("step-phase-clip"),
            Phase::OptimizerStep => Msg::new("step-phase-optimizer"),
            Phase::ZeroGrad => Msg::new("step-phase-zero-grad"),
        }
    }
}

/// Where the learner is in the replay of one traced step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepThrough {
    phases: Vec<Phase>,
    index: usize,
    /// The optimizer step (0-based) the traces describe.
    step: u64,
}

impl StepThrough {
    /// The phases of a step whose runs' traces are `traces` (`None` for a run not traced: it
    /// has diverged), at the first phase. `None` when no run was traced.
    pub fn new<'a>(traces: impl IntoIterator<Item = Option<&'a StepTrace>>) -> Option<Self> {
        let traces: Vec<&StepTrace> = traces.into_iter().flatten().collect();
        let step = traces.iter().map(|t| t.step).max()?;
        let most = traces.iter().map(|t| t.micro_batches.len()).max().unwrap_or(0);
        let mut phases: Vec<Phase> = (0..most)
            .flat_map(|k| [Phase::Forward(k), Phase::Loss(k), Phase::Backward(k)])
            .collect();
        if traces.iter().any(|t| t.clip_max_norm.is_some()) {
            phases.push(Phase::Clip);
        }
        phases.push(Phase::OptimizerStep);
        phases.push(Phase::ZeroGrad);
        Some(Self { phases, index: 0, step })
    }

    pub fn phase(&self) -> Phase {
        self.phases[self.index]
    }
    pub fn index(&self) -> usize {
        self.index
    }
    pub fn len(&self) -> usize {
        self.phases.len()
    }
    pub fn is_empty(&self) -> bool {
        self.phases.is_empty()
    }
    pub fn phases(&self) -> &[Phase] {
        &self.phases
    }
    pub fn step(&self) -> u64 {
        self.step
    }
    pub fn at_start(&self) -> bool {
        self.index == 0
    }
    pub fn at_end(&self) -> bool {
        self.index + 1 == self.phases.len()
    }

    /// Moves on to the next phase; false at the last one.
    pub fn forward(&mut self) -> bool {
        let moved = !self.at_end();
        self.index += usize::from(moved);
        moved
    }

    /// Moves back to the previous phase; false at the first one.
    pub fn back(&mut self) -> bool {
        let moved = !self.at_start();
        self.index -= usize::from(moved);
        moved
    }

    /// Keeps the phase index when the same step is shown again (a language change, a re-render),
    /// starts over for another step.
    pub fn follow(&mut self, next: StepThrough) {
        let index = if next.step == self.step { self.index } else { 0 };
        *self = next;
        self.index = index.min(self.phases.len() - 1);
    }

    /// The replay to show once the page's view offers `next`: `None` when `current` already shows
    /// that step (the same step and phases: it keeps its phase, and nothing needs redrawing),
    /// else the new replay, which keeps the phase only if it is the same step.
    pub fn replacing(current: Option<&StepThrough>, next: Option<StepThrough>) -> Option<Option<StepThrough>> {
        match (current, next) {
            (Some(current), Some(next)) if current.step == next.step && current.len() == next.len() => None,
            (None, None) => None,
            (Some(current), Some(next)) => {
                let mut followed = current.clone();
                followed.follow(next);
                Some(Some(followed))
            }
            (_, next) => Some(next),
        }
    }

    /// What run `trace` shows at the current phase.
    pub fn run_at<'a>(&self, trace: &'a StepTrace) -> RunAtPhase<'a> {
        run_at(trace, &self.phases[..=self.index])
    }

    /// The run's activation bytes after each phase, for the memory timeline.
    pub fn memory_timeline(&self, trace: &StepTrace) -> Vec<usize> {
        (0..self.phases.len())
            .map(|i| run_at(trace, &self.phases[..=i]).activation_bytes)
            .collect()
    }

    /// What the screen reader hears after a move: the phase and the first run's accumulation.
    pub fn announcement(&self) -> Msg {
        Msg::new("step-announce")
            .arg("phase", self.index + 1)
            .arg("phases", self.phases.len())
    }
}

/// What a run is doing at the current phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activity {
    Forward,
    Loss,
    Backward,
    /// Done with its micro-batches, waiting for the optimizer step.
    Waiting,
    Clip,
    OptimizerStep,
    ZeroGrad,
}

/// One run at one phase.
#[derive(Debug, Clone, PartialEq)]
pub struct RunAtPhase<'a> {
    pub activity: Activity,
    /// The micro-batch being processed (0-based), while in forward, loss or backward.
    pub micro_batch: Option<usize>,
    /// Micro-batches whose backward has run so far in this step.
    pub accumulated: usize,
    /// Of those, the ones whose gradient the buffer still holds (zero_grad inside the loop
    /// empties it before each).
    pub in_buffer: usize,
    /// Whether the buffer also holds earlier steps' gradients (zero_grad forgotten).
    pub holds_earlier_steps: bool,
    pub micro_batches: usize,
    /// The gradient buffer now: after the last backward, the clipped gradient from the clip on.
    /// `None` before the first backward (the buffer holds zeros, or, with zero_grad forgotten,
    /// the last step's gradient).
    pub partial: Option<&'a PartialSum>,
    /// Activation bytes held now.
    pub activation_bytes: usize,
    /// Whether the parameters have moved (from the optimizer step on).
    pub stepped: bool,
}

fn run_at<'a>(trace: &'a StepTrace, done: &[Phase]) -> RunAtPhase<'a> {
    let n = trace.micro_batches.len();
    let current = done.last().copied().unwrap_or(Phase::ZeroGrad);
    let mine = |k: usize| k < n;
    let accumulated = done
        .iter()
        .filter(|p| matches!(p, Phase::Backward(k) if mine(*k)))
        .count();
    let (activity, micro_batch) = match current {
        Phase::Forward(k) if mine(k) => (Activity::Forward, Some(k)),
        Phase::Loss(k) if mine(k) => (Activity::Loss, Some(k)),
        Phase::Backward(k) if mine(k) => (Activity::Backward, Some(k)),
        Phase::Forward(_) | Phase::Loss(_) | Phase::Backward(_) => (Activity::Waiting, None),
        // A run that does not clip the whole gradient waits while another does.
        Phase::Clip if trace.clip_max_norm.is_some() => (Activity::Clip, None),
        Phase::Clip => (Activity::Waiting, None),
        Phase::OptimizerStep => (Activity::OptimizerStep, None),
        // Only a run that calls zero_grad once per step does it here.
        Phase::ZeroGrad if trace.zeroed_at_start => (Activity::ZeroGrad, None),
        Phase::ZeroGrad => (Activity::Waiting, None),
    };
    let emptied = activity == Activity::ZeroGrad;
    let clipped = done.contains(&Phase::Clip) || done.contains(&Phase::OptimizerStep);
    let partial = if emptied {
        None
    } else if clipped {
        Some(&trace.applied)
    } else {
        accumulated.checked_sub(1).map(|k| &trace.micro_batches[k].partial)
    };
    let activation_bytes = match (activity, micro_batch) {
        (Activity::Forward | Activity::Loss, Some(k)) => trace.micro_batches[k].activation_bytes,
        _ => 0,
    };
    let last_zeroed = trace.micro_batches[..accumulated].iter().rposition(|m| m.zeroed_before);
    let in_buffer = if emptied {
        0
    } else {
        accumulated - last_zeroed.unwrap_or(0)
    };
    RunAtPhase {
        activity,
        micro_batch,
        accumulated,
        in_buffer,
        holds_earlier_steps: !trace.zeroed_at_start && last_zeroed.is_none(),
        micro_batches: n,
        partial,
        activation_bytes,
        stepped: done.contains(&Phase::OptimizerStep),
    }
}

/// The loss weight of run `spec`'s micro-batch as a formula with its numbers.
pub fn loss_weight(spec: &RunSpec, trace: &StepTrace, k: usize) -> Msg {
    let n = trace.micro_batches.len();
    let items = trace.micro_batches.get(k).map_or(0, |m| m.items);
    let total: usize = trace.micro_batches.iter().map(|m| m.items).sum();
    let msg = match (n, spec.regime.loss) {
        (1, _) => Msg::new("step-weight-full"),
        (_, LossNormalization::MeanOfMicroBatchMeans) => Msg::new("step-weight-mean-over-n"),
        (_, LossNormalization::Unscaled) => Msg::new("step-weight-unscaled"),
        (_, LossNormalization::TotalItemCount) => Msg::new("step-weight-total"),
    };
    msg.arg("items", items).arg("n", n).arg("total", total)
}

/// What a code line does, which decides in which phases it is highlighted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineRole {
    /// Loops and other lines never highlighted.
    Plain,
    ZeroGradInLoop,
    Forward,
    Loss,
    Backward,
    ClipInLoop,
    SchedulerInLoop,
    Clip,
    OptimizerStep,
    SchedulerAfterStep,
    ZeroGrad,
}

/// One line of a run's training loop: Python code, a translated comment, its role.
#[derive(Debug, Clone, PartialEq)]
pub struct CodeLine {
    pub indent: usize,
    pub code: String,
    pub comment: Option<Msg>,
    pub role: LineRole,
}

fn line(indent: usize, code: impl Into<String>, role: LineRole) -> CodeLine {
    CodeLine {
        indent,
        code: code.into(),
        comment: None,
        role,
    }
}

impl CodeLine {
    fn commented(mut self, id: &'static str) -> Self {
        self.comment = Some(Msg::new(id));
        self
    }
}

/// The PyTorch training loop of run `spec`, its pitfalls written as they appear in real code.
pub fn training_loop(spec: &RunSpec) -> Vec<CodeLine> {
    let regime = &spec.regime;
    let n = regime.micro_batches;
    let scheduled = !matches!(spec.schedule, ScheduleSpec::Constant { .. })
        || regime.scheduler == SchedulerPlacement::EveryMicroBatch;
    let clip = spec
        .clip_max_norm
        .map(|max_norm| format!("torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm={max_norm})"));
    let mut lines = vec![line(0, "for x, y in loader:", LineRole::Plain)];
    if n == 1 {
        lines.push(line(1, "outputs = model(x)", LineRole::Forward));
        lines.push(line(1, "loss = criterion(outputs, y)", LineRole::Loss));
        lines.push(line(1, "loss.backward()", LineRole::Backward));
    } else {
        lines.push(line(
            1,
            format!("for x_k, y_k in zip(x.chunk({n}), y.chunk({n})):"),
            LineRole::Plain,
        ));
        if regime.zero_grad == ZeroGradPlacement::EveryMicroBatch {
            lines.push(line(2, "optimizer.zero_grad()", LineRole::ZeroGradInLoop).commented("code-zero-grad-in-loop"));
        }
        lines.push(line(2, "outputs = model(x_k)", LineRole::Forward));
        lines.push(match regime.loss {
            LossNormalization::MeanOfMicroBatchMeans => {
                line(2, format!("loss = criterion(outputs, y_k) / {n}"), LineRole::Loss).commented("code-loss-over-n")
            }
            LossNormalization::Unscaled => {
                line(2, "loss = criterion(outputs, y_k)", LineRole::Loss).commented("code-loss-unscaled")
            }
            LossNormalization::TotalItemCount => {
                line(2, "loss = criterion_sum(outputs, y_k) / len(y)", LineRole::Loss).commented("code-loss-total")
            }
        });
        lines.push(line(2, "loss.backward()", LineRole::Backward).commented("code-backward-adds"));
        if let (Some(clip), ClipPlacement::EveryMicroBatch) = (&clip, regime.clip) {
            lines.push(line(2, clip.clone(), LineRole::ClipInLoop).commented("code-clip-in-loop"));
        }
        if scheduled && regime.scheduler == SchedulerPlacement::EveryMicroBatch {
            lines.push(line(2, "scheduler.step()", LineRole::SchedulerInLoop).commented("code-scheduler-in-loop"));
        }
    }
    if let (Some(clip), ClipPlacement::AfterAccumulation) = (clip, regime.clip) {
        lines.push(line(1, clip, LineRole::Clip));
    }
    lines.push(line(1, "optimizer.step()", LineRole::OptimizerStep));
    if scheduled && regime.scheduler == SchedulerPlacement::EveryOptimizerStep {
        lines.push(line(1, "scheduler.step()", LineRole::SchedulerAfterStep));
    }
    match regime.zero_grad {
        ZeroGradPlacement::BeforeEachStep => lines.push(line(1, "optimizer.zero_grad()", LineRole::ZeroGrad)),
        ZeroGradPlacement::Forgotten => {
            lines.push(line(1, "# optimizer.zero_grad()", LineRole::Plain).commented("code-zero-grad-forgotten"))
        }
        ZeroGradPlacement::EveryMicroBatch => {}
    }
    lines
}

/// Whether a line of the role `role` is being executed while the run does `activity`.
pub fn highlighted(role: LineRole, activity: Activity) -> bool {
    matches!(
        (activity, role),
        (Activity::Forward, LineRole::Forward | LineRole::ZeroGradInLoop)
            | (Activity::Loss, LineRole::Loss)
            | (
                Activity::Backward,
                LineRole::Backward | LineRole::ClipInLoop | LineRole::SchedulerInLoop
            )
            | (Activity::Clip, LineRole::Clip)
            | (
                Activity::OptimizerStep,
                LineRole::OptimizerStep | LineRole::SchedulerAfterStep
            )
            | (Activity::ZeroGrad, LineRole::ZeroGrad)
    )
}

/// The colour scale of a gradient heatmap: the 90th percentile of the magnitudes of `values`
/// (a few large entries would otherwise leave every other cell white; larger cells saturate),
/// never zero.
pub fn heatmap_scale(values: &[f64]) -> f64 {
    let mut magnitudes: Vec<f64> = values.iter().map(|v| v.abs()).collect();
    magnitudes.sort_by(f64::total_cmp);
    magnitudes
        .get(magnitudes.len() * 9 / 10)
        .copied()
        .unwrap_or(0.0)
        .max(f64::MIN_POSITIVE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gradlab_sim::lab::CpuLab;
    use gradlab_sim::scenario::Scenario;

    fn traced(id: &str) -> (CpuLab<f64>, Vec<StepTrace>) {
        let mut lab = CpuLab::<f64>::cpu(Scenario::by_id(id).expect("scenario").config).expect("valid");
        lab.set_snapshots(true);
        lab.step().expect("step");
        let traces = lab.runs().iter().map(|r| r.trace.clone().expect("traced")).collect();
        (lab, traces)
    }

    #[test]
    fn phases_run_through_every_micro_batch_then_the_update() {
        let (lab, traces) = traced("scaling");
        let most = traces.iter().map(|t| t.micro_batches.len()).max().expect("runs");
        let mut view = StepThrough::new(traces.iter().map(Some)).expect("traced");
        assert_eq!(view.len(), 3 * most + 2, "no run of scaling clips");
        assert_eq!(view.phase(), Phase::Forward(0));
        assert!(!view.back());
        let mut seen = vec![view.phase()];
        while view.forward() {
            seen.push(view.phase());
        }
        assert_eq!(seen.len(), view.len());
        assert_eq!(&seen[seen.len() - 2..], &[Phase::OptimizerStep, Phase::ZeroGrad]);
        assert!(view.at_end() && !view.forward());
        assert!(view.back());
        assert_eq!(view.phase(), Phase::OptimizerStep);
        assert_eq!(view.step(), 0);
        assert_eq!(lab.runs().len(), traces.len());
    }

    #[test]
    fn loss_over_n_reaches_the_full_gradient_at_the_last_micro_batch_only() {
        let (lab, traces) = traced("scaling");
        let mut view = StepThrough::new(traces.iter().map(Some)).expect("traced");
        let scaled = lab
            .runs()
            .iter()
            .position(|r| {
                r.spec.regime.micro_batches > 1 && r.spec.regime.loss == LossNormalization::MeanOfMicroBatchMeans
            })
            .expect("a loss / N run");
        let trace = &traces[scaled];
        let n = trace.micro_batches.len();
        let at = view.run_at(trace);
        assert_eq!(
            (at.activity, at.micro_batch, at.accumulated),
            (Activity::Forward, Some(0), 0)
        );
        assert!(at.partial.is_none());
        assert_eq!(at.activation_bytes, trace.micro_batches[0].activation_bytes);
        let mut errors = Vec::new();
        while view.forward() {
            let at = view.run_at(trace);
            if let Phase::Backward(k) = view.phase() {
                assert_eq!(at.accumulated, k + 1);
                assert_eq!(at.activation_bytes, 0, "backward frees the activations");
                errors.push(at.partial.expect("accumulated").relative_error);
            }
        }
        assert_eq!(errors.len(), n);
        assert!(errors[..n - 1].iter().all(|&e| e > 0.1), "{errors:?}");
        assert!(errors[n - 1] < 1e-12, "{errors:?}");
        assert!(view.run_at(trace).stepped);
        // zero_grad empties the buffer for the next step.
        let last = view.run_at(trace);
        assert_eq!(
            (last.activity, last.in_buffer, last.partial),
            (Activity::ZeroGrad, 0, None)
        );
        assert_eq!(last.accumulated, n);
        // Memory: a sawtooth of N low peaks; the full batch one tall peak.
        let timeline = view.memory_timeline(trace);
        let peaks = timeline.windows(2).filter(|w| w[0] > 0 && w[1] == 0).count();
        assert_eq!(peaks, n);
        let full = &traces[0];
        assert_eq!(full.micro_batches.len(), 1);
        let full_timeline = view.memory_timeline(full);
        assert_eq!(full_timeline.iter().max(), Some(&full.full_batch_activation_bytes));
        assert_eq!(
            timeline.iter().max().map(|m| m * n),
            Some(full.full_batch_activation_bytes)
        );
        // The full batch waits after its one micro-batch.
        view = StepThrough::new(traces.iter().map(Some)).expect("traced");
        for _ in 0..3 {
            view.forward();
        }
        assert_eq!(view.run_at(full).activity, Activity::Waiting);
        assert_eq!(view.run_at(full).accumulated, 1);
    }

    /// With zero_grad inside the loop the buffer holds one micro-batch; forgotten, it holds
    /// earlier steps' gradients too and nothing empties it at the end of the step.
    #[test]
    fn the_buffer_count_follows_zero_grad() {
        let (lab, traces) = traced("pitfalls");
        let mut view = StepThrough::new(traces.iter().map(Some)).expect("traced");
        while view.phase() != Phase::Backward(2) {
            view.forward();
        }
        for (run, trace) in lab.runs().iter().zip(&traces) {
            let at = view.run_at(trace);
            assert_eq!(at.accumulated, 3, "{}", run.spec.label);
            match run.spec.regime.zero_grad {
                ZeroGradPlacement::EveryMicroBatch => assert_eq!((at.in_buffer, at.holds_earlier_steps), (1, false)),
                ZeroGradPlacement::Forgotten => assert_eq!((at.in_buffer, at.holds_earlier_steps), (3, true)),
                ZeroGradPlacement::BeforeEachStep => assert_eq!((at.in_buffer, at.holds_earlier_steps), (3, false)),
            }
        }
        while view.forward() {}
        for (run, trace) in lab.runs().iter().zip(&traces) {
            let at = view.run_at(trace);
            let zeroes = run.spec.regime.zero_grad == ZeroGradPlacement::BeforeEachStep;
            assert_eq!(at.activity == Activity::ZeroGrad, zeroes, "{}", run.spec.label);
            assert_eq!(at.partial.is_none(), zeroes, "{}", run.spec.label);
        }
    }

    #[test]
    fn following_the_same_step_keeps_the_phase_and_a_new_one_starts_over() {
        let (_, traces) = traced("scaling");
        let mut view = StepThrough::new(traces.iter().map(Some)).expect("traced");
        view.forward();
        view.forward();
        view.follow(StepThrough::new(traces.iter().map(Some)).expect("traced"));
        assert_eq!(view.index(), 2);
        let mut later = traces.clone();
        for t in &mut later {
            t.step += 1;
        }
        view.follow(StepThrough::new(later.iter().map(Some)).expect("traced"));
        assert_eq!(view.index(), 0);
        assert!(StepThrough::new([None, None]).is_none());
    }

    #[test]
    fn code_shows_each_pitfall_where_it_is_and_highlights_the_phase() {
        let (lab, _) = traced("pitfalls");
        for run in lab.runs() {
            let code = training_loop(&run.spec);
            let text: Vec<&str> = code.iter().map(|l| l.code.as_str()).collect();
            let roles: Vec<LineRole> = code.iter().map(|l| l.role).collect();
            assert!(roles.contains(&LineRole::Backward) && roles.contains(&LineRole::OptimizerStep));
            match run.spec.regime.zero_grad {
                ZeroGradPlacement::Forgotten => assert!(!roles.contains(&LineRole::ZeroGrad)),
                ZeroGradPlacement::EveryMicroBatch => assert!(roles.contains(&LineRole::ZeroGradInLoop)),
                ZeroGradPlacement::BeforeEachStep => assert!(roles.contains(&LineRole::ZeroGrad)),
            }
            if run.spec.clip_max_norm.is_some() {
                assert!(text.iter().any(|t| t.contains("clip_grad_norm_")), "{text:?}");
            }
            // Every phase of a run highlights at least one line, except waiting.
            for activity in [
                Activity::Forward,
                Activity::Loss,
                Activity::Backward,
                Activity::OptimizerStep,
            ] {
                assert!(code.iter().any(|l| highlighted(l.role, activity)), "{activity:?}");
            }
            assert!(!code.iter().any(|l| highlighted(l.role, Activity::Waiting)));
        }
        let unscaled = RunSpec {
            regime: gradlab_sim::regime::RegimeSpec::accumulate(4).with_loss(LossNormalization::Unscaled),
            ..RunSpec::default()
        };
        // Every comment is a message in every language.
        let every_regime = gradlab_sim::scenario::SCENARIO_IDS
            .iter()
            .flat_map(|id| Scenario::by_id(id).expect("scenario").config.runs)
            .chain([unscaled.clone()]);
        for spec in every_regime {
            for line in training_loop(&spec) {
                for language in [gradlab_i18n::Language::English, gradlab_i18n::Language::Spanish] {
                    let localizer = gradlab_i18n::Localizer::new(language).expect("bundle");
                    if let Some(comment) = &line.comment {
                        assert!(localizer.has(&comment.id), "{} lacks {}", language.tag(), comment.id);
                    }
                }
            }
        }
        let code = training_loop(&unscaled);
        let loss = code.iter().find(|l| l.role == LineRole::Loss).expect("loss line");
        assert_eq!(loss.code, "loss = criterion(outputs, y_k)");
        assert_eq!(loss.comment, Some(Msg::new("code-loss-unscaled")));
    }

    #[test]
    fn a_replay_is_replaced_only_by_another_step_or_other_phases() {
        let (_, traces) = traced("scaling");
        let first = StepThrough::new(traces.iter().map(Some)).expect("traced");
        let mut moved = first.clone();
        moved.forward();
        // The same step offered again: nothing changes, the phase stays.
        assert_eq!(StepThrough::replacing(Some(&moved), Some(first.clone())), None);
        assert_eq!(StepThrough::replacing(None, None), None);
        // Nothing shown yet: the new replay, at its first phase.
        assert_eq!(
            StepThrough::replacing(None, Some(first.clone())),
            Some(Some(first.clone()))
        );
        // The trace gone (another experiment): nothing to show.
        assert_eq!(StepThrough::replacing(Some(&first), None), Some(None));
    }

    #[test]
    fn the_heatmap_scale_is_the_90th_percentile_magnitude() {
        let values: Vec<f64> = (1..=10).map(|v| -f64::from(v)).collect();
        assert_eq!(heatmap_scale(&values), 10.0);
        let mut many: Vec<f64> = (0..100).map(f64::from).collect();
        many[99] = 1e9;
        assert_eq!(heatmap_scale(&many), 90.0, "one huge entry does not wash out the rest");
        assert_eq!(heatmap_scale(&[]), f64::MIN_POSITIVE);
        assert_eq!(heatmap_scale(&[0.0, 0.0]), f64::MIN_POSITIVE);
    }
}
