//! In the browser: a few optimizer steps on WebGPU against the CPU engine in the same page.
//! Run with `cargo test --target wasm32-unknown-unknown --test browser_webgpu` (headless Chromium
//! with --enable-unsafe-webgpu, see webdriver.json).

#![cfg(target_arch = "wasm32")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails loudly at the first unexpected error"
)]

use gradlab::gpu::context::GpuContext;
use gradlab::gpu::engine::GpuEngine;
use gradlab::gpu::ops::GpuOps;
use gradlab::sim::backend::{StepBatch, TrainingBackend};
use gradlab::sim::data::DataOrder;
use gradlab::sim::lab::{CpuLab, RunSetup};
use gradlab::sim::metrics::relative_distance;
use gradlab::sim::regime::{plan_step, MetricOps};
use gradlab::sim::scenario::Scenario;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
async fn webgpu_training_steps_match_the_cpu_engine() {
    let context = GpuContext::new()
        .await
        .expect("a WebGPU adapter: start Chromium with --enable-unsafe-webgpu");
    let ops = GpuOps::shared(&context);
    let config = Scenario::by_id("norms").unwrap().config;
    let mut cpu = CpuLab::<f32>::cpu(config.clone()).unwrap();
    let data = config.dataset.generate();
    let steps = 3u64;
    for (index, run) in config.runs.iter().enumerate() {
        let mut engine = GpuEngine::new(&context, &ops, &RunSetup::new(&config, run, &data)).unwrap();
        let mut order = DataOrder::new(config.data_order_seed, data.train.example_count());
        for step in 0..steps {
            let examples = order.next_batch(config.batch_size);
            let batch = StepBatch::gather(&data.train, data.input_dim, examples, &run.regime);
            let plan = plan_step(
                &run.regime,
                run.clip_max_norm,
                &run.schedule,
                step,
                &batch.micro_batch_items(),
                MetricOps::ALL,
            );
            engine.encode_step(step, &plan, &batch).unwrap();
        }
        // One bulk readback for all steps, awaited: the browser completes it, nothing blocks.
        let records = engine.read_records().await.unwrap();
        assert_eq!(records.len(), steps as usize);
        if index == 0 {
            cpu.run(steps, |_| {}).unwrap();
        }
        let cpu_run = &cpu.runs()[index];
        for (gpu_record, cpu_record) in records.iter().zip(&cpu_run.history) {
            let loss = (gpu_record.train_loss - cpu_record.train_loss).abs() / cpu_record.train_loss;
            assert!(loss < 1e-5, "{}: loss off by {loss:e}", run.label);
        }
        let gpu_params = engine.read_parameters().await.unwrap();
        let error = relative_distance(&gpu_params, &cpu_run.backend.parameters().unwrap());
        assert!(error < 1e-5, "{}: parameters off by {error:e}", run.label);
    }
}

/// The async driver the Lab page uses: several steps per submission, one readback per run,
/// never blocking the page; the same losses as the CPU engine in the same page.
#[wasm_bindgen_test]
async fn the_gpu_lab_trains_without_blocking_and_matches_the_cpu() {
    use gradlab::gpu::lab::GpuLab;
    let context = GpuContext::new()
        .await
        .expect("WebGPU adapter (run Chromium with --enable-unsafe-webgpu)");
    let config = Scenario::by_id("scaling").unwrap().config;
    let mut gpu = GpuLab::new(&context, config.clone()).unwrap();
    gpu.advance(3).await.unwrap();
    gpu.advance(2).await.unwrap();
    let mut cpu = CpuLab::<f32>::cpu(config).unwrap();
    cpu.run(5, |_| {}).unwrap();
    for (g, c) in gpu.lab().runs().iter().zip(cpu.runs()) {
        assert_eq!(g.history.len(), 5);
        for (a, b) in g.history.iter().zip(&c.history) {
            let error = (a.train_loss - b.train_loss).abs() / b.train_loss.abs();
            assert!(
                error < 1e-5,
                "{} step {}: {} vs {}",
                g.spec.label,
                a.step,
                a.train_loss,
                b.train_loss
            );
        }
    }
    let probabilities = gpu.predict(0, &[0.0, 0.0]).await.unwrap();
    assert_eq!(probabilities.len(), 3);
}
