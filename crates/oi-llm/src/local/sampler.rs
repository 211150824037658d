//! How the next token is chosen.

use llama_cpp_2::sampling::LlamaSampler;

/// Greedy at temperature 0; otherwise top-k 40, top-p 0.95, min-p 0.05, then temperature.
pub fn sampler(temperature: f64) -> LlamaSampler {
    if temperature <= 0.0 {
        return LlamaSampler::greedy();
    }
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    #[allow(clippy::cast_possible_truncation)]
    let temperature = temperature as f32;
    LlamaSampler::chain_simple([
        LlamaSampler::top_k(40),
        LlamaSampler::top_p(0.95, 1),
        LlamaSampler::min_p(0.05, 1),
        LlamaSampler::temp(temperature),
        LlamaSampler::dist(seed),
    ])
}
