//! The quiz page: one question at a time, instant feedback, progress saved on every answer.
//! The page is thin: its decisions are `gradlab_quiz::page` and `gradlab_scorm::lms_quiz`.

mod actions;
mod feedback;
mod navigation;
mod question;
mod result;
mod state;

use leptos::prelude::*;

use super::certificate::CertificateCard;
use super::i18n::tr;
use feedback::FeedbackView;
use gradlab_quiz::bank::QuestionBank;
use navigation::Navigation;
use question::QuestionView;
use result::ResultView;
use state::Quiz;

#[component]
pub fn QuizPage(
    bank: QuestionBank,
    /// Opens the attempt at this question (a link from the Lab); its answers stay as they are.
    question: Option<String>,
) -> impl IntoView {
    let topics = bank.topics();
    let (quiz, opening) = Quiz::open(bank, question);
    quiz.follow_other_tabs();
    quiz.save_on_open(&opening);
    let Quiz {
        lms,
        message,
        issued,
        lti,
        show_result,
        name,
        ..
    } = quiz;
    if let Some(link) = lti {
        // A finished attempt's grade goes to the course once per showing of the result (a new
        // attempt finished later sends its own); the certificate carries the platform's name.
        Effect::new(move |sent: Option<bool>| {
            let shown = show_result.get();
            if shown && sent != Some(true) {
                quiz.send_lti_grade();
            }
            shown
        });
        Effect::new(move || {
            if let Some(platform_name) = link.learner_name() {
                if name.get_untracked().trim().is_empty() {
                    name.set(platform_name);
                }
            }
        });
    }
    let score_line = move || {
        let s = quiz.bank.with_value(|b| quiz.attempt.with(|a| a.score(b)));
        super::i18n::msg(
            &gradlab_i18n::Msg::new("quiz-score-line")
                .arg("correct", s.first_try_correct)
                .arg("answered", s.answered)
                .arg("total", s.total),
        )
    };
    view! {
        <section class="quiz">
            <h2>{tr("quiz-title")}</h2>
            {lti.map(|link| view! { <super::lti::LtiBanner link /> })}
            <p class="muted">{tr(if lms.is_some() { "quiz-intro-lms" } else { "quiz-intro" })}</p>
            <p class="muted" data-testid="score-line">{score_line}</p>
            <div role="status" aria-live="polite" class="message">{move || message.get()}</div>
            <QuestionView quiz />
            <div aria-live="polite"><FeedbackView quiz /></div>
            <Navigation quiz />
            <ResultView quiz />
            {move || issued.get().map(|c| view! { <CertificateCard issued=c topics=topics.clone() /> })}
        </section>
    }
}
