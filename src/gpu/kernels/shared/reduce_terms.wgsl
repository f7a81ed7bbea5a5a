// What element i of a reduction adds to its invocation's partial sums, `mode` as ReduceMode
// (x = a[i]; the second operand read from `b`, array<f32>, which the including kernel declares):
// 1: x^2 in lane x;
// 2: x^2, x*y, y^2, (x - y)^2 in lanes x, y, z, w (a gradient against its reference in one pass);
// 3: x, y in lanes x, y (test loss and correct predictions in one pass).

fn reduce_terms(mode: u32, x: f32, i: u32) -> vec4<f32> {
    switch mode {
        case 1u: { return vec4<f32>(x * x, 0.0, 0.0, 0.0); }
        case 2u: {
            let y = b[i];
            let d = x - y;
            return vec4<f32>(x * x, x * y, y * y, d * d);
        }
        default: { return vec4<f32>(x, b[i], 0.0, 0.0); }
    }
}
