//! fs VARIANT [N] [DIR=/tmp]: tokio::fs beside bench/fs.cpp
//!   read64k           N reads of 64 KiB at offset 0 of a cached 64 KiB file (seek + read_exact)
//!   read64k_blocking  the same with std's blocking read_at: the floor
//!   read16m           N whole-file reads (tokio::fs::read) of a 16 MiB file
//!   small_read        N whole-file reads of a 4 KiB file
//!   small_write       N whole-file writes (tokio::fs::write) of 4 KiB
//!   write4k           N writes of 4 KiB at offset 0 of an open file (seek + write_all)
use io_peers::*;
use std::io::SeekFrom;
use std::os::unix::fs::FileExt;
use std::time::Instant;
use tokio::io::{AsyncReadExt, AsyncSeekExt, AsyncWriteExt};

fn make_file(dir: &str, name: &str, size: usize) -> String {
    let path = format!("{dir}/tokio-bench-{name}");
    std::fs::write(&path, vec![b'f'; size]).unwrap();
    path
}

fn main() {
    let a = Args::new();
    let variant = a.str(0, "read64k");
    let n = a.num(1, 20000);
    let dir = a.str(2, "/tmp");
    let rt = rt_current();
    let elapsed = match variant.as_str() {
        "read64k" => {
            let path = make_file(&dir, "64k", 65536);
            rt.block_on(async {
                let mut file = tokio::fs::File::open(&path).await.unwrap();
                let mut buffer = vec![0u8; 65536];
                let t = Instant::now();
                for _ in 0..n {
                    file.seek(SeekFrom::Start(0)).await.unwrap();
                    file.read_exact(&mut buffer).await.unwrap();
                }
                let el = t.elapsed();
                assert_eq!(buffer[65535], b'f');
                el
            })
        }
        "read64k_blocking" => {
            let path = make_file(&dir, "64k", 65536);
            let file = std::fs::File::open(&path).unwrap();
            let mut buffer = vec![0u8; 65536];
            let t = Instant::now();
            for _ in 0..n {
                assert_eq!(file.read_at(&mut buffer, 0).unwrap(), 65536);
            }
            t.elapsed()
        }
        "read16m" | "small_read" => {
            let size = if variant == "read16m" { 16 << 20 } else { 4096 };
            let path = make_file(&dir, &variant, size);
            rt.block_on(async {
                let mut total = 0;
                let t = Instant::now();
                for _ in 0..n {
                    total += tokio::fs::read(&path).await.unwrap().len();
                }
                let el = t.elapsed();
                assert_eq!(total as u64, n * size as u64);
                el
            })
        }
        "small_write" => {
            let path = format!("{dir}/tokio-bench-small-write");
            let data = vec![b'w'; 4096];
            rt.block_on(async {
                let t = Instant::now();
                for _ in 0..n {
                    tokio::fs::write(&path, &data).await.unwrap();
                }
                t.elapsed()
            })
        }
        "write4k" => {
            let path = format!("{dir}/tokio-bench-write4k");
            let data = vec![b'w'; 4096];
            rt.block_on(async {
                let mut file = tokio::fs::File::create(&path).await.unwrap();
                let t = Instant::now();
                for _ in 0..n {
                    file.seek(SeekFrom::Start(0)).await.unwrap();
                    file.write_all(&data).await.unwrap();
                }
                file.flush().await.unwrap();
                let el = t.elapsed();
                assert_eq!(std::fs::read(&path).unwrap(), data);
                el
            })
        }
        v => panic!("unknown variant {v}"),
    };
    emit("fs", CT, &variant, n, elapsed, &[]);
}
