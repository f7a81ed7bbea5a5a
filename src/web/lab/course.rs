//! The presets as a course, over `lab_state::course`: the progress strip, the prediction to
//! make before playing (revealed with what the learner's run measured) and the way on: the next
//! experiment once this one is observed, a closing summary and the quiz after the last.
//! Progress is kept in the browser's storage, apart from the URL, like the quiz's.

use leptos::prelude::*;

use super::super::browser;
use super::super::i18n::{link, msg, tr};
use crate::i18n::Msg;
use crate::lab_state::course::{place, CourseProgress, Prediction, OBSERVED_STEPS, STORAGE_KEY};
use crate::lab_state::session::LabView;
use crate::lab_state::texts;
use crate::route::Route;
use crate::sim::scenario::SCENARIO_IDS;

/// Loads the saved progress; unreadable data is kept aside (never lost) and a notice says so.
fn load_progress() -> (CourseProgress, Option<Msg>) {
    let Some(text) = browser::load(STORAGE_KEY) else {
        return (CourseProgress::default(), None);
    };
    match CourseProgress::from_json(&text) {
        Ok(progress) => (progress, None),
        Err(_) => {
            let notice = match browser::keep_unreadable(STORAGE_KEY, &text) {
                Ok(kept) => Msg::new("course-unreadable").arg("key", kept),
                Err(e) => e,
            };
            (CourseProgress::default(), Some(notice))
        }
    }
}

#[component]
pub fn CoursePanel(
    experiment: Signal<String>,
    view: RwSignal<LabView>,
    /// The steps trained of `experiment` (0 while `view` still shows the previous one).
    steps: Signal<u64>,
    /// Opens another experiment of the course.
    go_to: Callback<&'static str>,
) -> impl IntoView {
    let (loaded, unreadable) = load_progress();
    let progress = RwSignal::new(loaded);
    let notice = RwSignal::new(unreadable);
    let save = move || {
        let json = progress.with_untracked(CourseProgress::to_json);
        if let Err(e) = browser::save(STORAGE_KEY, &json) {
            notice.set(Some(e));
        }
    };
    // An experiment counts as observed once it has trained far enough.
    Effect::new(move |_| {
        let (id, steps) = (experiment.get(), steps.get());
        if progress.try_update(|p| p.observe(&id, steps)).unwrap_or(false) {
            save();
        }
    });
    let here = move || place(&experiment.get());
    let observed = move || progress.with(|p| p.is_observed(&experiment.get()));
    let strip =
        move || {
            let current = experiment.get();
            SCENARIO_IDS
            .iter()
            .enumerate()
            .map(|(i, &id)| {
                let done = progress.with(|p| p.is_observed(id));
                let title = msg(&texts::title(id));
                let status = if done { format!(", {}", tr("course-observed")) } else { String::new() };
                view! {
                    <li class:done=done>
                        <a href=link(format!("view=lab&scenario={id}")) aria-current=(current == id).then_some("step")
                            data-course-step=id
                            on:click=move |ev| { ev.prevent_default(); go_to.run(id); }>
                            <span aria-hidden="true">{i + 1}{if done { "✓" } else { "" }}</span>
                            <span class="visually-hidden">{format!("{title}{status}")}</span>
                        </a>
                    </li>
                }
            })
            .collect_view()
        };

    // The prediction of this experiment: a choice to lock in, then the reveal.
    let chosen = RwSignal::new(None::<usize>);
    Effect::new(move |_| {
        experiment.track();
        chosen.set(None);
    });
    let prediction = move || Prediction::of(&experiment.get());
    let locked = move || progress.with(|p| p.prediction(&experiment.get()));
    let lock = move |_| {
        if let Some(choice) = chosen.get_untracked() {
            let id = experiment.get_untracked();
            progress.update(|p| p.predict(&id, choice));
            save();
        }
    };
    let question = move || {
        let p = prediction()?;
        let name = format!("predict-{}", p.experiment);
        let choices = (0..p.choices)
            .map(|i| {
                let id = format!("{name}-{i}");
                view! {
                    <li>
                        <input type="radio" id=id.clone() name=name.clone() value=i.to_string()
                            prop:checked=move || chosen.get() == Some(i)
                            on:change=move |_| chosen.set(Some(i)) />
                        <label for=id>{msg(&p.choice(i))}</label>
                    </li>
                }
            })
            .collect_view();
        Some(view! {
            <fieldset class="prediction-choices">
                <legend>{msg(&p.question())}</legend>
                <ul>{choices}</ul>
                <button type="button" data-testid="predict-lock" disabled=move || chosen.get().is_none() on:click=lock>
                    {tr("predict-lock")}
                </button>
            </fieldset>
        })
    };
    let reveal = move || {
        let (p, choice) = (prediction()?, locked()?);
        let answered = msg(&Msg::new("predict-locked").arg("choice", msg(&p.choice(choice))));
        let outcome = if !observed() {
            view! { <p data-testid="predict-wait">{msg(&Msg::new("predict-wait").arg("steps", OBSERVED_STEPS))}</p> }
                .into_any()
        } else {
            let verdict = if choice == p.correct {
                tr("predict-right")
            } else {
                msg(&Msg::new("predict-wrong").arg("answer", msg(&p.choice(p.correct))))
            };
            let measured = (steps.get() > 0)
                .then(|| view.with(|v| p.measured(v)))
                .flatten()
                .map(|m| msg(&m));
            view! {
                <p data-testid="predict-verdict" data-correct=(choice == p.correct).to_string()>
                    <strong>{verdict}</strong>" "{msg(&p.explanation())}
                </p>
                <p data-testid="predict-measured">{measured}</p>
                <p><a data-testid="predict-quiz" href=link(Route::Quiz { question: Some(p.quiz_question.to_string()) }.query())>
                    {tr("predict-quiz")}
                </a></p>
            }
            .into_any()
        };
        Some(view! {
            <p data-testid="predict-locked">{answered}</p>
            {outcome}
        })
    };
    let way_on = move || {
        let place = here()?;
        if !observed() {
            return Some(
                view! { <p class="muted">{msg(&Msg::new("course-next-hint").arg("steps", OBSERVED_STEPS))}</p> }
                    .into_any(),
            );
        }
        Some(match place.next {
            Some(next) => view! {
                <p><button type="button" class="primary" data-testid="course-next" on:click=move |_| go_to.run(next)>
                    {msg(&Msg::new("course-next").arg("title", msg(&texts::title(next))))}
                </button></p>
            }
            .into_any(),
            None => view! {
                <div class="course-summary" data-testid="course-summary">
                    <h4>{move || progress.with(|p| if p.complete() {
                        tr("course-summary-title")
                    } else {
                        msg(&Msg::new("course-summary-title-partial")
                            .arg("observed", p.observed.len())
                            .arg("total", SCENARIO_IDS.len()))
                    })}</h4>
                    <p>{tr("course-summary")}</p>
                    <p><a class="button primary" href=link(Route::QUIZ.query())>{tr("course-to-quiz")}</a></p>
                </div>
            }
            .into_any(),
        })
    };

    view! {
        <section class="course" aria-labelledby="predict-title" data-testid="course" hidden=move || here().is_none()>
            <nav class="course-strip" aria-label=tr("course-strip-label")>
                <span data-testid="course-position">{move || here().map(|p| msg(&Msg::new("course-strip").arg("position", p.position).arg("total", p.total)))}</span>
                <ol>{strip}</ol>
            </nav>
            <p class="notice" role="status" hidden=move || notice.with(Option::is_none)>{move || notice.get().map(|m| msg(&m))}</p>
            <h3 id="predict-title">{tr("predict-title")}</h3>
            <div data-testid="prediction">
                {move || if locked().is_some() { reveal().map(IntoAny::into_any) } else { question().map(IntoAny::into_any) }}
            </div>
            {way_on}
        </section>
    }
}
