//! Entry points for the fuzz targets in `fuzz/` (not an API: hidden from the docs, and free to
//! change with the code they wrap). Each is a thin wrapper over what the command itself runs.

use std::path::{Path, PathBuf};

pub use crate::commands::hook::classify_for_fuzzing as classify_hook;
pub use crate::commands::install::edit_for_fuzzing as edit_settings;

/// A scratch journal directory of this process (on tmpfs where there is one).
fn scratch() -> &'static Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let base = Path::new("/dev/shm");
        let base = if base.is_dir() {
            base.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        let d = base.join(format!("hookjournal-fuzz-cli-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("a scratch directory");
        d
    })
}

/// `config.toml` as every command (the hook first) loads it: whether it was taken without a
/// warning, and the warning (one line per problem, each naming the file).
pub fn load_settings(text: &[u8]) -> (bool, Option<String>) {
    let dir = scratch();
    std::fs::write(dir.join("config.toml"), text).expect("writing config.toml");
    let (_, warning) = engine::settings::Settings::load(dir);
    (warning.is_none(), warning)
}
