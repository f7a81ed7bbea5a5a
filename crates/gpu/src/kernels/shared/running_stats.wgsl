// BatchNorm's running statistics of feature f (set f), as PyTorch: running = (1 - m) running +
// m batch, the variance unbiased. Prepended to the training forwards that bind `running`
// (means, then variances, from running_offset), for BatchNorm-shaped sets (set f is feature f).
fn update_running(f: u32, mean: f32, variance: f32) {
    let keep = 1.0 - args.momentum;
    let unbias = f32(args.len) / f32(max(args.len, 2u) - 1u);
    let mean_slot = args.running_offset + f;
    let var_slot = args.running_offset + args.width + f;
    running[mean_slot] = keep * running[mean_slot] + args.momentum * mean;
    running[var_slot] = keep * running[var_slot] + args.momentum * variance * unbias;
}
