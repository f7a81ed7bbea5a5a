//! The planner page (`?view=plan`): a thin view over `lab_state::plan_form` and
//! `sim::planner`. The form holds what was typed; every change plans again.

use leptos::prelude::*;

use super::i18n::{msg, num, tr};
use gradlab_i18n::Msg;
use gradlab_lab_state::plan_form::{CustomModel, MethodChoice, PlanForm, CUSTOM, MEMORY_PRESETS};
use gradlab_sim::engine_memory::LabEngine;
use gradlab_sim::planner::{Family, Lever, MemoryBytes, Optimizer, Outcome, Plan, Precision, Sharding, MODELS};

fn lever(lever: Lever) -> String {
    tr(match lever {
        Lever::Checkpointing => "plan-lever-checkpointing",
        Lever::Lora => "plan-lever-lora",
        Lever::Qlora => "plan-lever-qlora",
        Lever::EightDevicesZero3 => "plan-lever-zero3",
        Lever::HalfSequence => "plan-lever-shorter",
    })
}

/// A count with its thousands grouped as the page's language writes them.
fn grouped(n: u64) -> String {
    let separator = match super::i18n::language() {
        gradlab_i18n::Language::English => ',',
        gradlab_i18n::Language::Spanish => '.',
    };
    let digits = n.to_string();
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(separator);
        }
        out.push(digit);
    }
    out
}

/// GiB for a real model's memory; KiB or MiB with the exact bytes for the Lab's networks.
fn gib(bytes: u64) -> String {
    if bytes >= 1 << 30 {
        num(&format!("{:.2} GiB", bytes as f64 / (1u64 << 30) as f64))
    } else {
        num(&gradlab_lab_state::session::format_bytes(bytes))
    }
}

/// A labelled select over `choices` (value, message id), writing the chosen value.
fn select<T: Copy + PartialEq + Send + Sync + 'static>(
    id: &'static str,
    label: &'static str,
    choices: Vec<(T, String)>,
    current: impl Fn() -> T + Copy + Send + Sync + 'static,
    set: impl Fn(T) + Copy + Send + Sync + 'static,
) -> impl IntoView {
    let options = choices.clone();
    let items = choices
        .into_iter()
        .enumerate()
        .map(|(i, (value, text))| view! { <option value=i.to_string() selected=move || current() == value>{text}</option> })
        .collect_view();
    view! {
        <label for=id>{tr(label)}</label>
        <select id=id data-testid=id on:change=move |ev| {
            if let Some((value, _)) = event_target_value(&ev).parse::<usize>().ok().and_then(|i| options.get(i)) {
                set(*value);
            }
        }>{items}</select>
    }
}

/// A labelled text input over one field of the form.
fn text_input(
    id: &'static str,
    label: &'static str,
    form: RwSignal<PlanForm>,
    field: fn(&mut PlanForm) -> &mut String,
) -> impl IntoView {
    view! {
        <label for=id>{tr(label)}</label>
        <input id=id data-testid=id inputmode="decimal"
            prop:value=move || form.with(|f| field(&mut f.clone()).clone())
            on:input=move |ev| form.update(|f| *field(f) = event_target_value(&ev)) />
    }
}

/// A labelled text input over one dimension of the custom model.
fn dimension_input(
    id: &'static str,
    label: &'static str,
    form: RwSignal<PlanForm>,
    field: fn(&mut CustomModel) -> &mut String,
) -> impl IntoView {
    view! {
        <label for=id>{tr(label)}</label>
        <input id=id data-testid=id inputmode="numeric"
            prop:value=move || form.with(|f| field(&mut f.custom.clone()).clone())
            on:input=move |ev| form.update(|f| *field(&mut f.custom) = event_target_value(&ev)) />
    }
}

/// The stacked bar of one device's memory against its budget.
fn memory_bar(m: &MemoryBytes) -> impl IntoView {
    let scale = m.total.max(m.budget).max(1) as f64;
    let parts = [
        ("plan-part-weights", m.weights, "#0b5cad"),
        ("plan-part-gradients", m.gradients, "#d55e00"),
        ("plan-part-optimizer", m.optimizer, "#7a3e9d"),
        ("plan-part-activations", m.activations, "#009e73"),
        ("plan-part-margin", m.margin, "#8a8f98"),
    ];
    // The Lab's networks keep no margin: their row would only say 0.
    let parts: Vec<_> = parts
        .into_iter()
        .filter(|(id, bytes, _)| *id != "plan-part-margin" || *bytes > 0)
        .collect();
    let segments = parts
        .iter()
        .map(|(_, bytes, color)| {
            let style = format!("width: {:.2}%; background: {color}", 100.0 * *bytes as f64 / scale);
            view! { <span class="plan-segment" style=style></span> }
        })
        .collect_view();
    let legend = parts
        .iter()
        .map(|(id, bytes, color)| {
            let style = format!("background: {color}");
            view! { <li><span class="plan-key" style=style aria-hidden="true"></span>{tr(id)}": "{gib(*bytes)}</li> }
        })
        .collect_view();
    let budget = format!("left: {:.2}%", 100.0 * m.budget as f64 / scale);
    let fits = m.total <= m.budget;
    view! {
        <div class="plan-bar" role="img" data-testid="plan-bar" data-fits=fits.to_string()
            aria-label=msg(&Msg::new("plan-total").arg("total", gib(m.total)).arg("budget", gib(m.budget)))>
            {segments}
            <span class="plan-budget" style=budget aria-hidden="true"></span>
        </div>
        <p data-testid="plan-total">{msg(&Msg::new("plan-total").arg("total", gib(m.total)).arg("budget", gib(m.budget)))}</p>
        <ul class="plan-legend">{legend}</ul>
    }
}

fn plan_view(plan: &Plan, target: String) -> impl IntoView {
    let result = Msg::new("plan-result")
        .arg("micro", plan.micro_batch)
        .arg("steps", plan.accumulation_steps)
        .arg("devices", plan.devices)
        .arg("effective", plan.effective_batch);
    let not_exact = (!plan.exact).then(|| {
        let text = match plan.exact_micro_batch {
            Some(b) => msg(&Msg::new("plan-not-exact")
                .arg("effective", plan.effective_batch)
                .arg("target", &target)
                .arg("exact", b)),
            None => msg(&Msg::new("plan-not-exact-none")
                .arg("effective", plan.effective_batch)
                .arg("target", &target)),
        };
        view! { <p class="notice" data-testid="plan-not-exact">{text}</p> }
    });
    let c = &plan.costs;
    let pretty = |value: &serde_json::Value| serde_json::to_string_pretty(value).unwrap_or_default();
    view! {
        <p class="plan-answer" data-testid="plan-result" data-micro-batch=plan.micro_batch.to_string()
            data-steps=plan.accumulation_steps.to_string() data-effective=plan.effective_batch.to_string()>
            {msg(&result)}
        </p>
        {not_exact}
        <p class="muted">{msg(&Msg::new("plan-parameters")
            .arg("total", grouped(plan.parameters.total))
            .arg("trainable", grouped(plan.parameters.trainable)))}</p>
        {memory_bar(&plan.memory_bytes)}
        <h3>{tr("plan-costs-title")}</h3>
        <ul data-testid="plan-costs">
            <li>{msg(&Msg::new("plan-cost-forward").arg("passes", c.forward_passes_per_micro_batch))}</li>
            <li>{msg(&Msg::new("plan-cost-steps").arg("steps", c.passes_per_step))}</li>
            <li>{if plan.devices > 1 {
                msg(&Msg::new("plan-cost-all-reduce")
                    .arg("bytes", gib(c.all_reduce_bytes))
                    .arg("with", c.all_reduces_with_no_sync)
                    .arg("without", c.all_reduces_without_no_sync))
            } else {
                tr("plan-cost-one-device")
            }}</li>
        </ul>
        <h3>{tr("plan-configs-title")}</h3>
        <div class="plan-configs">
            <figure><figcaption>"Hugging Face TrainingArguments"</figcaption><pre data-testid="plan-hf">{pretty(&plan.configs.hf_training_arguments)}</pre></figure>
            <figure><figcaption>"DeepSpeed"</figcaption><pre data-testid="plan-deepspeed">{pretty(&plan.configs.deepspeed)}</pre></figure>
            <figure><figcaption>"Lightning Trainer"</figcaption><pre>{pretty(&plan.configs.lightning)}</pre></figure>
            <figure><figcaption>"PyTorch"</figcaption><pre>{plan.configs.pytorch_loop.clone()}</pre></figure>
        </div>
    }
}

#[component]
pub fn PlanPage() -> impl IntoView {
    let form = RwSignal::new(PlanForm::default());
    let outcome = Memo::new(move |_| form.with(|f| f.request().and_then(|r| r.plan())));
    let mut models = MODELS.iter().map(|m| (m.id, m.name.to_string())).collect::<Vec<_>>();
    models.push((CUSTOM, tr("plan-model-custom")));
    let is_custom = move || form.with(|f| f.model == CUSTOM);
    let is_lab = move || form.with(PlanForm::is_lab_model);
    let memory_presets = MEMORY_PRESETS
        .iter()
        .map(|(gib, cards)| {
            let value = gib.to_string();
            let shown = value.clone();
            view! {
                <option value=value selected=move || form.with(|f| f.memory_gib.trim() == shown)>
                    {format!("{gib} GiB: {cards}")}
                </option>
            }
        })
        .collect_view();
    let result = move || match outcome.get() {
        Err(error) => view! {
            <p class="field-error" role="alert" data-testid="plan-error" data-field=error.field>
                {msg(&Msg::new("plan-error").arg("field", error.field).arg("problem", error.problem))}
            </p>
        }
        .into_any(),
        Ok(Outcome::Fits(plan)) => plan_view(&plan, form.with(|f| f.target_batch.clone())).into_any(),
        Ok(Outcome::NothingFits(reason)) => {
            let levers = reason
                .would_fit
                .iter()
                .map(|l| view! { <li>{lever(*l)}</li> })
                .collect_view();
            let together = reason.would_fit_together.map(|all| {
                let all: Vec<String> = all.into_iter().map(lever).collect();
                view! { <p data-testid="plan-together">{msg(&Msg::new("plan-would-fit-together").arg("levers", all.join(" + ")))}</p> }
            });
            view! {
                <p class="notice error" data-testid="plan-nothing-fits">
                    {msg(&Msg::new("plan-nothing-fits")
                        .arg("needed", gib(reason.memory_bytes.total))
                        .arg("budget", gib(reason.memory_bytes.budget)))}
                </p>
                {memory_bar(&reason.memory_bytes)}
                {(!reason.would_fit.is_empty()).then(|| view! { <p>{tr("plan-would-fit")}</p><ul>{levers}</ul> })}
                {together}
            }
            .into_any()
        }
    };
    view! {
        <section class="plan" aria-labelledby="plan-title">
            <h2 id="plan-title">{tr("plan-title")}</h2>
            <p class="lead">{tr("plan-intro")}</p>
            <form class="plan-form" on:submit=move |ev| ev.prevent_default()>
                {select("plan-model", "plan-model", models, move || form.with(|f| {
                        if f.model == CUSTOM { CUSTOM } else { MODELS.iter().find(|m| m.id == f.model).map_or("", |m| m.id) }
                    }),
                    move |id: &'static str| form.update(|f| f.choose_model(id)))}
                <fieldset class="plan-custom" data-testid="plan-custom" hidden=move || !is_custom()>
                    <legend>{tr("plan-custom-title")}</legend>
                    {select("plan-family", "plan-family", vec![
                        (Family::Gpt2, tr("plan-family-gpt2")),
                        (Family::Llama, tr("plan-family-llama")),
                        (Family::Qwen2, tr("plan-family-qwen2")),
                    ], move || form.with(|f| f.custom.family), move |family| form.update(|f| f.custom.family = family))}
                    {dimension_input("plan-layers", "plan-layers", form, |c| &mut c.layers)}
                    {dimension_input("plan-hidden", "plan-hidden", form, |c| &mut c.hidden)}
                    {dimension_input("plan-heads", "plan-heads", form, |c| &mut c.heads)}
                    {dimension_input("plan-kv-heads", "plan-kv-heads", form, |c| &mut c.kv_heads)}
                    {dimension_input("plan-intermediate", "plan-intermediate", form, |c| &mut c.intermediate)}
                    {dimension_input("plan-vocabulary", "plan-vocabulary", form, |c| &mut c.vocabulary)}
                    {dimension_input("plan-positions", "plan-positions", form, |c| &mut c.positions)}
                    <label class="check"><input type="checkbox" data-testid="plan-tied"
                        prop:checked=move || form.with(|f| f.custom.tied_embeddings)
                        on:change=move |ev| form.update(|f| f.custom.tied_embeddings = event_target_checked(&ev)) />{tr("plan-tied")}</label>
                </fieldset>
                <div class="plan-group" hidden=move || !is_lab()>
                    {select("plan-engine", "plan-engine", vec![
                        (LabEngine::Webgpu, tr("plan-engine-webgpu")),
                        (LabEngine::Cpu, tr("plan-engine-cpu")),
                    ], move || form.with(|f| f.engine), move |engine| form.update(|f| f.engine = engine))}
                </div>
                <p class="plan-lab-note" data-testid="plan-lab-note" hidden=move || !is_lab()>{tr("plan-lab-fixed")}</p>
                // What the Lab's engines fix (full training in fp32, every activation kept, one
                // point per example) is not asked for their network.
                <div class="plan-group" hidden=is_lab>
                {select("plan-method", "plan-method", vec![
                    (MethodChoice::Full, tr("plan-method-full")),
                    (MethodChoice::Lora, tr("plan-method-lora")),
                    (MethodChoice::Qlora, tr("plan-method-qlora")),
                ], move || form.with(|f| f.method), move |m| form.update(|f| f.method = m))}
                {text_input("plan-lora-rank", "plan-lora-rank", form, |f| &mut f.lora_rank)}
                <label class="check"><input type="checkbox" data-testid="plan-all-linear"
                    prop:checked=move || form.with(|f| f.all_linear)
                    on:change=move |ev| form.update(|f| f.all_linear = event_target_checked(&ev)) />{tr("plan-lora-all-linear")}</label>
                {select("plan-precision", "plan-precision", vec![
                    (Precision::Bf16Mixed, tr("plan-precision-bf16-mixed")),
                    (Precision::Bf16, tr("plan-precision-bf16")),
                    (Precision::Fp32, tr("plan-precision-fp32")),
                ], move || form.with(|f| f.precision), move |p| form.update(|f| f.precision = p))}
                {select("plan-optimizer", "plan-optimizer", vec![
                    (Optimizer::AdamW, "AdamW".to_string()),
                    (Optimizer::AdamW8bit, tr("plan-optimizer-adamw8bit")),
                    (Optimizer::SgdMomentum, tr("plan-optimizer-sgd")),
                    (Optimizer::Sgd, tr("plan-optimizer-sgd-plain")),
                ], move || form.with(|f| f.optimizer), move |o| form.update(|f| f.optimizer = o))}
                <label class="check"><input type="checkbox" data-testid="plan-checkpointing"
                    prop:checked=move || form.with(|f| f.checkpointing)
                    on:change=move |ev| form.update(|f| f.checkpointing = event_target_checked(&ev)) />{tr("plan-checkpointing")}</label>
                {text_input("plan-seq-len", "plan-seq-len", form, |f| &mut f.sequence_length)}
                </div>
                <label for="plan-memory-preset">{tr("plan-memory-preset")}</label>
                <select id="plan-memory-preset" data-testid="plan-memory-preset"
                    on:change=move |ev| form.update(|f| f.memory_gib = event_target_value(&ev))>
                    <option value="">{tr("plan-memory-custom")}</option>
                    {memory_presets}
                </select>
                {text_input("plan-memory", "plan-memory", form, |f| &mut f.memory_gib)}
                {text_input("plan-devices", "plan-devices", form, |f| &mut f.devices)}
                {select("plan-sharding", "plan-sharding", vec![
                    (Sharding::None, tr("plan-sharding-none")),
                    (Sharding::Zero1, "ZeRO-1".to_string()),
                    (Sharding::Zero2, "ZeRO-2".to_string()),
                    (Sharding::Zero3, "ZeRO-3 / FSDP".to_string()),
                ], move || form.with(|f| f.sharding), move |s| form.update(|f| f.sharding = s))}
                {text_input("plan-target", "plan-target", form, |f| &mut f.target_batch)}
            </form>
            <div class="plan-result" aria-live="polite">{result}</div>
            <p class="muted">{move || if is_lab() { tr("plan-exact-note") } else { tr("plan-estimate-note") }}</p>
        </section>
    }
}
