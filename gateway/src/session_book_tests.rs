use std::sync::Arc;

use rmcp::model::{ClientCapabilities, ProtocolVersion, RequestId};

use super::Book;

fn caps() -> ClientCapabilities {
    ClientCapabilities::default()
}

#[test]
fn a_session_is_known_while_its_registration_lives() {
    let book = Arc::new(Book::default());
    let r = book.register("s1", ProtocolVersion::V_2025_11_25, caps());
    let known = book.get("s1").expect("registered");
    assert_eq!(known.version, ProtocolVersion::V_2025_11_25);
    assert!(book.get("s2").is_none());
    drop(r);
    assert!(book.get("s1").is_none());
    assert_eq!(book.len(), 0);
}

#[test]
fn an_old_registration_never_removes_a_newer_one_of_the_same_id() {
    let book = Arc::new(Book::default());
    let old = book.register("s1", ProtocolVersion::V_2025_06_18, caps());
    let new = book.register("s1", ProtocolVersion::V_2025_11_25, caps());
    drop(old);
    let known = book.get("s1").expect("the newer one stays");
    assert_eq!(known.version, ProtocolVersion::V_2025_11_25);
    drop(new);
    assert!(book.get("s1").is_none());
}

#[test]
fn a_cancel_reaches_the_request_in_flight_and_nothing_else() {
    let book = Arc::new(Book::default());
    let _r = book.register("s1", ProtocolVersion::V_2025_11_25, caps());
    let known = book.get("s1").expect("registered");
    let (one, two) = (RequestId::Number(1), RequestId::Number(2));
    let a = known.begin(&one).expect("begun");
    let b = known.begin(&two).expect("begun");
    // A second request of an id in flight is the SDK's.
    assert!(known.begin(&one).is_none());
    known.cancel(&RequestId::Number(3));
    assert!(!a.token.is_cancelled() && !b.token.is_cancelled());
    known.cancel(&one);
    assert!(a.token.is_cancelled() && !b.token.is_cancelled());
    // The id may come again while the cancelled one winds down; the old
    // one's end does not forget the new one.
    let again = known.begin(&one).expect("begun again");
    drop(a);
    assert_eq!(known.in_flight(), 2);
    known.cancel(&one);
    assert!(again.token.is_cancelled());
    drop((again, b));
    assert_eq!(known.in_flight(), 0);
}

/// A sweep ends the sessions nothing reached for the idle time and keeps
/// the touched ones; an id no session has is never timed.
#[test]
fn a_sweep_ends_what_nothing_reached_and_a_made_up_id_adds_nothing() {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::session::SessionManager;
    use std::time::Duration;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    rt.block_on(async {
        let m = LocalSessionManager::default();
        let (a, _ta) = m.create_session().await.expect("a session");
        let (b, _tb) = m.create_session().await.expect("a session");
        let book = Book::default();
        book.touch("made-up");
        assert_eq!(book.timed(), 0);
        let idle = Duration::from_millis(300);
        book.sweep(&m, idle).await;
        assert_eq!(book.timed(), 2);
        tokio::time::sleep(Duration::from_millis(200)).await;
        book.touch(&b);
        tokio::time::sleep(Duration::from_millis(150)).await;
        book.sweep(&m, idle).await;
        assert!(!m.has_session(&a).await.expect("an answer"));
        assert!(m.has_session(&b).await.expect("an answer"));
        assert_eq!(book.timed(), 1);
    });
}
