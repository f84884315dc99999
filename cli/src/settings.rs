//! The file-system side of configuration: reading the files
//! `analyzer::config::Resolver` asks for.

use analyzer::config::{Overrides, Resolved, Resolver};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub struct ConfigResolver {
    inner: Resolver,
}

pub fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// A path as the user would write it: relative to the working directory
/// when it is below it.
fn shown(path: &Path) -> String {
    std::env::current_dir()
        .ok()
        .and_then(|cwd| path.strip_prefix(cwd).ok().map(Path::to_path_buf))
        .unwrap_or_else(|| path.to_path_buf())
        .display()
        .to_string()
}

fn read(path: &Path) -> Option<Result<String, String>> {
    if !path.is_file() {
        return None;
    }
    Some(std::fs::read_to_string(path).map_err(|e| e.to_string()))
}

impl ConfigResolver {
    /// No configuration file at all (`--no-config`).
    pub fn without_files(overrides: Overrides) -> ConfigResolver {
        ConfigResolver {
            inner: Resolver::without_files(overrides),
        }
    }

    pub fn new(explicit: Option<&Path>, overrides: Overrides) -> Result<ConfigResolver, String> {
        let explicit = explicit
            .map(|p| {
                std::fs::read_to_string(p)
                    .map(|text| (p, text))
                    .map_err(|e| format!("{}: cannot read the configuration: {e}", p.display()))
            })
            .transpose()?;
        let inner = Resolver::new(explicit.as_ref().map(|(p, t)| (*p, t.as_str())), overrides)?;
        Ok(ConfigResolver { inner })
    }

    /// The settings for one file.
    pub fn for_file(&mut self, file: &Path) -> Result<Arc<Resolved>, String> {
        self.inner.for_file(&absolute(file), &mut read, &shown)
    }
}
