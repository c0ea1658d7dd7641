//! Fails early, with the vendoring step, when the upstream checkout is missing.
use std::path::Path;

const FILES: [&str; 4] = ["batch.rs", "batchable.rs", "batcher.rs", "config.rs"];

fn main() {
    let dir = Path::new("upstream/crates/common/batcher/src");
    for file in FILES {
        let path = dir.join(file);
        println!("cargo:rerun-if-changed={}", path.display());
        if !path.is_file() {
            panic!(
                "missing {}: vendor thin-edge.io at the pinned commit first, e.g.\n  \
                 git clone https://github.com/thin-edge/thin-edge.io upstream && \
                 git -C upstream checkout c6cc23d6a0bd10d65854b5cbde45f92d14c8a9f6\n\
                 (or a symlink `upstream` to such a checkout; see README.md)",
                path.display()
            );
        }
    }
}
