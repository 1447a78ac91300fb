//! Rust stubs generated from `aidl/org/agentos/channel/*.aidl` by `rsbinder-aidl` at build time.
#![allow(
    missing_docs,
    missing_debug_implementations,
    unreachable_pub,
    clippy::all,
    clippy::unwrap_used,
    clippy::expect_used,
    non_snake_case,
    non_camel_case_types,
    unused_imports,
    unused_qualifications,
    dead_code
)]

rsbinder::include_aidl!("binder_channel_aidl");

#[cfg(test)]
mod tests {
    use super::org::agentos::channel::{IAcpService, IChannel, IMcpService};

    #[test]
    fn ch01_ichannel_methods_are_transactions_1_2_3_in_order() {
        assert_eq!(rsbinder::FIRST_CALL_TRANSACTION, 1);
        assert_eq!(IChannel::transactions::r#send, 1);
        assert_eq!(IChannel::transactions::r#close, 2);
        assert_eq!(IChannel::transactions::r#ack, 3);
    }

    #[test]
    fn ch02_ch03_open_is_the_first_transaction_of_both_entry_interfaces() {
        assert_eq!(IAcpService::transactions::r#open, 1);
        assert_eq!(IMcpService::transactions::r#open, 1);
    }

    #[test]
    fn ch01_descriptors_are_the_agentos_names() {
        use rsbinder::Remotable;
        assert_eq!(
            IChannel::BnChannel::descriptor(),
            "org.agentos.channel.IChannel"
        );
        assert_eq!(
            IAcpService::BnAcpService::descriptor(),
            "org.agentos.channel.IAcpService"
        );
        assert_eq!(
            IMcpService::BnMcpService::descriptor(),
            "org.agentos.channel.IMcpService"
        );
        assert_eq!(
            super::super::receiving_end::ICHANNEL_DESCRIPTOR,
            "org.agentos.channel.IChannel"
        );
    }
}
