//! What a learner sees first: a two-sentence introduction on the first visit (what gradient
//! accumulation is and why anyone uses it, with the way into the course; dismissed once and
//! remembered), and a one-line summary per run beside Play, so that training shows without
//! scrolling to the table and the charts.

use leptos::prelude::*;

use super::super::browser;
use super::super::i18n::{msg, num, tr};
use super::run_swatch;
use gradlab_lab_state::session::LabView;

/// Where the browser remembers that the introduction was dismissed.
const INTRO_KEY: &str = "gradlab.intro";

#[component]
pub fn Introduction(
    /// Opens the course's first experiment.
    start_course: Callback<()>,
) -> impl IntoView {
    let shown = RwSignal::new(browser::load(INTRO_KEY).is_none());
    let dismiss = move || {
        shown.set(false);
        // Not remembered only where storage refuses; the page still hides it now.
        let _ = browser::save(INTRO_KEY, "dismissed");
    };
    move || {
        shown.get().then(|| {
            view! {
                <section class="intro" aria-labelledby="intro-title" data-testid="intro">
                    <h2 id="intro-title">{tr("intro-title")}</h2>
                    <p>{tr("intro-what")}</p>
                    <p>{tr("intro-here")}</p>
                    <p class="intro-actions">
                        <button type="button" class="primary" data-testid="intro-start" on:click=move |_| {
                            dismiss();
                            start_course.run(());
                        }>{tr("intro-start")}</button>
                        <button type="button" data-testid="intro-dismiss" on:click=move |_| dismiss()>{tr("intro-dismiss")}</button>
                    </p>
                </section>
            }
        })
    }
}

/// Each run's loss at the live step, in one line each.
#[component]
pub fn LiveSummary(view: RwSignal<LabView>) -> impl IntoView {
    let items = move || {
        view.with(|v| v.rows_at(None))
            .into_iter()
            .map(|row| {
                let value = match &row.diverged {
                    Some(divergence) => msg(divergence),
                    None => num(&row.loss),
                };
                view! {
                    <li>
                        {run_swatch(row.style)}
                        <span class="live-run">{row.label}</span>
                        <span class="num" data-testid="live-loss">{value}</span>
                    </li>
                }
            })
            .collect_view()
    };
    view! {
        <section class="live-summary" aria-labelledby="live-summary-title" data-testid="live-summary"
            hidden=move || view.with(|v| v.steps == 0)>
            <h3 id="live-summary-title" class="live-summary-title">
                {move || msg(&gradlab_i18n::Msg::new("live-summary-title").arg("step", view.with(|v| v.steps)))}
            </h3>
            <ul>{items}</ul>
        </section>
    }
}
