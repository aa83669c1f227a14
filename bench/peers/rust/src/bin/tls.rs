//! tls VARIANT [N] CERT KEY CA: tokio-openssl beside bench/tls.cpp
//!   handshake  N full TLS handshakes over loopback (no resumption), a TCP
//!              connection each, client and server in this process
//!   bulk       N MiB from client to server over one TLS connection, in
//!              writes of 1 MiB
use io_peers::*;
use openssl::ssl::{Ssl, SslAcceptor, SslConnector, SslFiletype, SslMethod};
use std::time::Instant;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_openssl::SslStream;

async fn pair(
    listener: &TcpListener,
    acceptor: &SslAcceptor,
    connector: &SslConnector,
) -> (SslStream<TcpStream>, SslStream<TcpStream>) {
    let addr = listener.local_addr().unwrap();
    let (client, server) = tokio::join!(TcpStream::connect(addr), listener.accept());
    let (client, server) = (client.unwrap(), server.unwrap().0);
    client.set_nodelay(true).unwrap();
    server.set_nodelay(true).unwrap();
    let mut config = connector.configure().unwrap();
    config.set_verify_hostname(true);
    let mut c = SslStream::new(config.into_ssl("localhost").unwrap(), client).unwrap();
    let mut s = SslStream::new(Ssl::new(acceptor.context()).unwrap(), server).unwrap();
    let (a, b) = tokio::join!(Pin::new(&mut c).connect(), Pin::new(&mut s).accept());
    a.unwrap();
    b.unwrap();
    (c, s)
}

async fn transfer(
    client: &mut SslStream<TcpStream>,
    server: &mut SslStream<TcpStream>,
    chunk: &[u8],
    sink: &mut [u8],
    mib: u64,
) {
    let send = async {
        for _ in 0..mib {
            client.write_all(chunk).await.unwrap();
        }
        client.flush().await.unwrap();
    };
    let receive = async {
        let mut received = 0u64;
        while received < mib << 20 {
            let got = server.read(sink).await.unwrap();
            assert!(got > 0, "early end");
            received += got as u64;
        }
    };
    tokio::join!(send, receive);
}

fn main() {
    let a = Args::new();
    let variant = a.str(0, "handshake");
    let n = a.num(1, 2000);
    let (cert, key, ca) = (a.str(2, ""), a.str(3, ""), a.str(4, ""));
    let mut acceptor = SslAcceptor::mozilla_intermediate_v5(SslMethod::tls()).unwrap();
    acceptor.set_certificate_chain_file(&cert).unwrap();
    acceptor.set_private_key_file(&key, SslFiletype::PEM).unwrap();
    let acceptor = acceptor.build();
    let mut connector = SslConnector::builder(SslMethod::tls()).unwrap();
    connector.set_ca_file(&ca).unwrap();
    let connector = connector.build();
    let rt = rt_current();
    let mut extra = vec![];
    let elapsed = rt.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        match variant.as_str() {
            "handshake" => {
                for _ in 0..n / 10 {
                    pair(&listener, &acceptor, &connector).await;
                }
                let t = Instant::now();
                for _ in 0..n {
                    pair(&listener, &acceptor, &connector).await;
                }
                t.elapsed()
            }
            "bulk" => {
                let (mut client, mut server) = pair(&listener, &acceptor, &connector).await;
                let chunk = vec![b'b'; 1 << 20];
                let mut sink = vec![0u8; 1 << 20];
                transfer(&mut client, &mut server, &chunk, &mut sink, n / 10 + 1).await;
                let t = Instant::now();
                transfer(&mut client, &mut server, &chunk, &mut sink, n).await;
                let el = t.elapsed();
                extra.push(("mib_per_s", n as f64 / el.as_secs_f64()));
                el
            }
            v => panic!("unknown variant {v}"),
        }
    });
    emit("tls", CT, &variant, n, elapsed, &extra);
}
