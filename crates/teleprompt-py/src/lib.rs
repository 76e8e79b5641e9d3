//! The `teleprompt` Python package's native module, `teleprompt._teleprompt`:
//! a thin layer over the Rust library. Data is converted to JSON values
//! once per render (`convert`), renders run without the GIL, errors become
//! the exceptions of `teleprompt.errors` (`errors`), and Python callables
//! serve as host functions (`functions`).

use pyo3::prelude::*;

/// Renders allocate many small values (data, nodes, strings); mimalloc
/// serves them about twice as fast as the system allocator. Only the
/// extension's own allocations use it.
#[global_allocator]
static ALLOCATOR: allocator::Allocator = allocator::Allocator;

mod allocator;

mod context;
mod convert;
mod errors;
mod functions;
mod library;
mod prompt;

#[pymodule]
fn _teleprompt(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<prompt::PyPrompt>()?;
    module.add_class::<prompt::Rendered>()?;
    module.add_class::<prompt::TokenCache>()?;
    module.add_class::<context::PromptContext>()?;
    module.add_class::<library::Library>()?;
    module.add_function(wrap_pyfunction!(prompt::_restore_prompt, module)?)?;
    module.add_function(wrap_pyfunction!(library::_restore_library, module)?)?;
    module.add_function(wrap_pyfunction!(prompt::_restore_rendered, module)?)?;
    module.add_function(wrap_pyfunction!(context::_restore_context, module)?)?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
