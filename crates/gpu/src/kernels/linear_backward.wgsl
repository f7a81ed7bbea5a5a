// The backward of one linear layer above another in one dispatch: the first
// parameter_gradient_jobs() invocations add its parameter gradients (as
// linear_parameter_gradient.wgsl), the rest write the gradient at the input of the activation
// below (as linear_input_gradient.wgsl). Both only read dy and write different buffers, so
// neither waits for the other; each sum keeps its kernel's order. The vec4 shapes of both
// kernels (fan_in, fan_out, x_offset and weight_offset multiples of 4); other shapes take the
// two separate kernels, each vec4 or scalar by its own shape.

@group(0) @binding(1) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> dy: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> grads: array<f32>;
@group(0) @binding(4) var<storage, read> params: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read> u_below: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> du_below: array<vec4<f32>>;

// As the parameter-gradient kernel: small workgroups spread few jobs over a software adapter's
// threads.
@compute @workgroup_size(16)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let parameter_jobs = parameter_gradient_jobs();
    if id.x < parameter_jobs {
        parameter_gradient_block(id.x);
    } else {
        input_gradient_block(id.x - parameter_jobs);
    }
}
