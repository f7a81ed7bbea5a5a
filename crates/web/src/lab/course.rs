//! The presets as a course, over `lab_state::course`: the progress strip, the prediction to
//! make before playing (revealed with what the learner's run measured) and the way on: the next
//! experiment once this one is observed, a closing summary and the quiz after the last.
//! Progress is kept in the browser's storage, apart from the URL, like the quiz's.

use leptos::prelude::*;

use super::super::browser;
use super::super::i18n::{link, msg, tr};
use gradlab_i18n::Msg;
use gradlab_lab_state::course::{place, CourseProgress, Prediction, OBSERVED_STEPS, STORAGE_KEY};
use gradlab_lab_state::session::LabView;
use gradlab_lab_state::texts;
use gradlab_route::Route;
use gradlab_sim::scenario::SCENARIO_IDS;

/// The course progress of this browser, shared by the Lab page (whose answer and Play wait
/// for a prediction) and the course panel; saved on every change.
#[derive(Debug, Clone, Copy)]
pub struct CourseStore {
    pub progress: RwSignal<CourseProgress>,
    notice: RwSignal<Option<Msg>>,
}

impl CourseStore {
    /// Loads the saved progress; unreadable data is kept aside (never lost) and a notice says so.
    pub fn load() -> Self {
        let (progress, notice) = match browser::load(STORAGE_KEY) {
            None => (CourseProgress::default(), None),
            Some(text) => match CourseProgress::from_json(&text) {
                Ok(progress) => (progress, None),
                Err(_) => {
                    let notice = match browser::keep_unreadable(STORAGE_KEY, &text) {
                        Ok(kept) => Msg::new("course-unreadable").arg("key", kept),
                        Err(e) => e,
                    };
                    (CourseProgress::default(), Some(notice))
                }
            },
        };
        Self {
            progress: RwSignal::new(progress),
            notice: RwSignal::new(notice),
        }
    }

    /// Applies `change` and, when the progress differs afterwards, shows and saves it (so the
    /// steps of training, which ask on every frame, redraw nothing when nothing changed).
    fn change(&self, change: impl FnOnce(&mut CourseProgress) -> bool) {
        let Some(mut next) = self.progress.try_get_untracked() else {
            return;
        };
        if !change(&mut next) || self.progress.with_untracked(|p| *p == next) {
            return;
        }
        let json = next.to_json();
        self.progress.set(next);
        if let Err(e) = browser::save(STORAGE_KEY, &json) {
            self.notice.set(Some(e));
        }
    }
}

#[component]
pub fn CoursePanel(
    store: CourseStore,
    experiment: Signal<String>,
    view: RwSignal<LabView>,
    /// The steps trained of `experiment` (0 while `view` still shows the previous one).
    steps: Signal<u64>,
    /// Opens another experiment of the course.
    go_to: Callback<&'static str>,
) -> impl IntoView {
    let CourseStore { progress, notice } = store;
    // An experiment counts as observed once it has trained far enough (after a prediction or
    // a skip).
    Effect::new(move |_| {
        let (id, steps) = (experiment.get(), steps.get());
        store.change(|p| p.observe(&id, steps));
    });
    let here = move || place(&experiment.get());
    let observed = move || progress.with(|p| p.is_observed(&experiment.get()));
    let strip = move || {
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
                        <a href=link(Route::Lab { scenario: Some(id.to_string()) }.href()) aria-current=(current == id).then_some("step")
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
            let trained = steps.get_untracked();
            store.change(|p| {
                p.predict(&id, choice, trained);
                true
            });
        }
    };
    let skip = move |_| {
        let id = experiment.get_untracked();
        store.change(|p| {
            p.skip(&id);
            true
        });
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
                <p class="prediction-actions">
                    <button type="button" class="primary" data-testid="predict-lock" disabled=move || chosen.get().is_none() on:click=lock>
                        {tr("predict-lock")}
                    </button>
                    <button type="button" data-testid="predict-skip" on:click=skip>{tr("predict-skip")}</button>
                </p>
            </fieldset>
        })
    };
    let reveal = move || {
        let p = prediction()?;
        let id = experiment.get();
        let choice = locked();
        let skipped = progress.with(|pr| pr.is_skipped(&id));
        if choice.is_none() && !skipped {
            return None;
        }
        let answered = match choice {
            Some(choice) => {
                let late = (!progress.with(|pr| pr.predicted_first(&id))).then(|| tr("predict-after-watching"));
                let after_watching = late.is_some().to_string();
                view! {
                    <p data-testid="predict-locked" data-after-watching=after_watching>
                        {msg(&Msg::new("predict-locked").arg("choice", msg(&p.choice(choice))))}
                        {late.map(|text| view! { " "<span class="muted">{text}</span> })}
                    </p>
                }
                .into_any()
            }
            None => view! { <p data-testid="predict-skipped">{tr("predict-skipped")}</p> }.into_any(),
        };
        let outcome = if !observed() {
            view! { <p data-testid="predict-wait">{msg(&Msg::new("predict-wait").arg("steps", OBSERVED_STEPS))}</p> }
                .into_any()
        } else {
            let verdict = match choice {
                Some(choice) if choice == p.correct => tr("predict-right"),
                Some(_) => msg(&Msg::new("predict-wrong").arg("answer", msg(&p.choice(p.correct)))),
                None => msg(&Msg::new("predict-answer").arg("answer", msg(&p.choice(p.correct)))),
            };
            let measured = (steps.get() > 0)
                .then(|| view.with(|v| p.measured(v)))
                .flatten()
                .map(|m| msg(&m));
            view! {
                <p data-testid="predict-verdict" data-correct=(choice == Some(p.correct)).to_string()>
                    <strong>{verdict}</strong>" "{msg(&p.explanation())}
                </p>
                <p data-testid="predict-measured">{measured}</p>
                <p><a data-testid="predict-quiz" href=link(Route::Quiz { question: Some(p.quiz_question.to_string()) }.href())>
                    {tr("predict-quiz")}
                </a></p>
            }
            .into_any()
        };
        Some(view! {
            {answered}
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
                    <p><a class="button primary" href=link(Route::QUIZ.href())>{tr("course-to-quiz")}</a></p>
                    <p><a data-testid="course-plan" href=link(Route::Plan.href())>{tr("course-to-plan")}</a></p>
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
                {move || match reveal() {
                    Some(shown) => Some(shown.into_any()),
                    None => question().map(IntoAny::into_any),
                }}
            </div>
            {way_on}
        </section>
    }
}
