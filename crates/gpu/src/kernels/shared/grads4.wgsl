// Four neighbouring values of `grads` (array<f32>, which the kernel that includes this
// declares), loaded and stored one by one: a parameter-gradient row need not start on a vec4.

fn load4(at: u32) -> vec4<f32> {
    return vec4<f32>(grads[at], grads[at + 1u], grads[at + 2u], grads[at + 3u]);
}

fn store4(at: u32, sums: vec4<f32>) {
    grads[at] = sums.x;
    grads[at + 1u] = sums.y;
    grads[at + 2u] = sums.z;
    grads[at + 3u] = sums.w;
}
