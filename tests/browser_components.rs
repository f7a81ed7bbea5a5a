//! In the browser: the Lab's components mounted on their own, checked through the DOM as a
//! learner (or a screen reader) meets them. Run with
//! `cargo test --target wasm32-unknown-unknown --test browser_components`.

#![cfg(target_arch = "wasm32")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails loudly"
)]

use gradlab::embed::{normalize_origin, test_support::ORIGINS};
use gradlab::lab_state::controls::{Control, LabControls};
use gradlab::lab_state::session::LabView;
use gradlab::plot::Metric;
use gradlab::sim::lab::CpuLab;
use gradlab::sim::scenario::Scenario;
use gradlab::web::components::{ChartCanvas, ControlsPanel};
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

fn document() -> web_sys::Document {
    web_sys::window().unwrap().document().unwrap()
}

fn fresh_root() -> web_sys::HtmlElement {
    let root: web_sys::HtmlElement = document().create_element("div").unwrap().unchecked_into();
    document().body().unwrap().append_child(&root).unwrap();
    root
}

/// Lets effects run and the DOM update.
async fn settle() {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        web_sys::window()
            .unwrap()
            .set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, 20)
            .unwrap();
    });
    wasm_bindgen_futures::JsFuture::from(promise).await.unwrap();
}

fn input(root: &web_sys::HtmlElement, control: Control) -> web_sys::HtmlElement {
    root.query_selector(&format!("#control-{}", control.key()))
        .unwrap()
        .unwrap_or_else(|| panic!("no field for {}", control.key()))
        .unchecked_into()
}

#[wasm_bindgen_test]
async fn every_control_is_labelled_and_errors_are_shown_beside_it() {
    let root = fresh_root();
    let controls = RwSignal::new(LabControls {
        scenario: "sandbox".into(),
        ..LabControls::default()
    });
    let typo = RwSignal::new(None);
    let mounted = mount_to(root.clone(), move || {
        view! { <ControlsPanel controls=controls typo=typo copy_to_sandbox=Callback::new(|()| {}) /> }
    });
    settle().await;
    // The memory budget is set beside the memory bars it changes (the Lab e2e tests it there).
    for control in Control::ALL
        .into_iter()
        .filter(|c| !matches!(c, Control::Scenario | Control::MemoryBudget))
    {
        let field = input(&root, control);
        let label = root
            .query_selector(&format!("label[for=control-{}]", control.key()))
            .unwrap()
            .unwrap_or_else(|| panic!("no label for {}", control.key()));
        assert!(!label.text_content().unwrap().trim().is_empty());
        assert_eq!(
            field.get_attribute("aria-describedby").unwrap(),
            format!("control-{}-error", control.key())
        );
        assert!(field.tab_index() >= 0, "{} is not reachable by keyboard", control.key());
    }
    controls.update(|c| {
        c.batch_size = 90;
        c.micro_batches = 4;
    });
    settle().await;
    let n = input(&root, Control::MicroBatches);
    assert_eq!(n.get_attribute("aria-invalid").as_deref(), Some("true"));
    let error = root.query_selector("#control-n-error").unwrap().unwrap();
    assert_eq!(
        error.text_content().unwrap(),
        "B = 90 is not divisible by N = 4: micro-batches would differ in size"
    );
    // Typing text that is not a number keeps the last valid value and says why.
    let lr: web_sys::HtmlInputElement = input(&root, Control::LearningRate).unchecked_into();
    lr.set_value("fast");
    lr.dispatch_event(&web_sys::Event::new("input").unwrap()).unwrap();
    settle().await;
    assert_eq!(controls.get_untracked().learning_rate, 0.5);
    let lr_error = root.query_selector("#control-lr-error").unwrap().unwrap();
    assert_eq!(lr_error.text_content().unwrap(), "Enter a number");
    drop(mounted);
}

#[wasm_bindgen_test]
async fn a_preset_locks_its_fields_and_shows_its_own_values() {
    let root = fresh_root();
    let controls = RwSignal::new(LabControls {
        scenario: "scaling_adam".into(),
        ..LabControls::default()
    });
    let typo = RwSignal::new(None);
    let mounted = mount_to(root.clone(), move || {
        view! { <ControlsPanel controls=controls typo=typo copy_to_sandbox=Callback::new(|()| {}) /> }
    });
    settle().await;
    let lr: web_sys::HtmlInputElement = input(&root, Control::LearningRate).unchecked_into();
    assert!(lr.disabled());
    assert_eq!(
        lr.value(),
        "0.01",
        "the preset's learning rate, not the sandbox default"
    );
    let optimizer: web_sys::HtmlSelectElement = input(&root, Control::Optimizer).unchecked_into();
    assert_eq!(optimizer.value(), "adam");
    let seed: web_sys::HtmlInputElement = input(&root, Control::Seed).unchecked_into();
    assert!(!seed.disabled(), "the seed applies to presets");
    drop(mounted);
}

#[wasm_bindgen_test]
async fn a_chart_draws_once_there_is_data() {
    let root = fresh_root();
    root.style().set_property("width", "480px").unwrap();
    let mut lab = CpuLab::<f32>::cpu(Scenario::by_id("scaling").unwrap().config).unwrap();
    let labels = lab.runs().iter().map(|r| r.spec.label.clone()).collect();
    let view = RwSignal::new(LabView::new(&lab, labels, vec![], false));
    let chart = Memo::new(move |_| view.with(|v| v.chart(Metric::TrainLoss)));
    let (resized, _) = signal(0u32);
    let inspect = RwSignal::new(None::<u64>);
    let last_step = Signal::derive(move || view.with(|v| v.steps));
    let mounted = mount_to(root.clone(), move || {
        view! { <ChartCanvas chart=chart file_name="loss.png" testid="chart" resized=resized inspect=inspect last_step=last_step /> }
    });
    settle().await;
    let canvas: web_sys::HtmlCanvasElement = root.query_selector("canvas").unwrap().unwrap().unchecked_into();
    assert_eq!(canvas.get_attribute("role").as_deref(), Some("img"));
    assert!(canvas.get_attribute("aria-label").is_some_and(|l| !l.is_empty()));
    let ink = |canvas: &web_sys::HtmlCanvasElement| {
        let context: web_sys::CanvasRenderingContext2d = canvas.get_context("2d").unwrap().unwrap().unchecked_into();
        let data = context
            .get_image_data(0.0, 0.0, f64::from(canvas.width()), f64::from(canvas.height()))
            .unwrap()
            .data();
        data.chunks(4)
            .filter(|p| p[3] > 0 && (p[0] < 200 || p[1] < 200 || p[2] < 200))
            .count()
    };
    let before = ink(&canvas);
    lab.run(5, |_| {}).unwrap();
    view.update(|v| {
        v.sync(&lab);
    });
    settle().await;
    let container = canvas.parent_element().unwrap().client_width() as u32;
    assert!(container > 300);
    assert_eq!(canvas.width(), container, "sized to its container");
    let after = ink(&canvas);
    assert!(after > before + 500, "curves drawn: {before} -> {after} dark pixels");
    // A step inspected elsewhere (another chart, the scrubber) gets a crosshair here, inside
    // the canvas, further right for a later step; none for a step not taken yet.
    assert!(root.query_selector(".crosshair").unwrap().is_none());
    let mut lefts = Vec::new();
    for step in [2u64, 4] {
        inspect.set(Some(step));
        settle().await;
        let crosshair: web_sys::HtmlElement = root
            .query_selector(".crosshair")
            .unwrap()
            .expect("crosshair")
            .unchecked_into();
        assert_eq!(crosshair.dataset().get("step"), Some(step.to_string()));
        // Its place as a share of the canvas's width (the page's style sheet positions it).
        let left = crosshair.style().get_property_value("left").unwrap();
        lefts.push(left.trim_end_matches('%').parse::<f64>().unwrap());
    }
    assert!(0.0 < lefts[0] && lefts[0] < lefts[1] && lefts[1] < 100.0, "{lefts:?}");
    inspect.set(Some(9));
    settle().await;
    assert!(root.query_selector(".crosshair").unwrap().is_none());
    drop(mounted);
}

/// The embed's origin check over the browser's own URL parser gives what it gives over the url
/// crate natively: the same cases, the same origins.
#[wasm_bindgen_test]
fn the_origin_check_reads_urls_with_the_browsers_parser_as_with_the_url_crate() {
    for (given, origin) in ORIGINS {
        assert_eq!(
            normalize_origin(given, gradlab::web::parse_url).as_deref(),
            *origin,
            "{given}"
        );
    }
}
