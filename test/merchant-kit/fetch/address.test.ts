import { describe, expect, it } from "vitest";
import { blockedRange } from "../../../src/merchant-kit/fetch/index.ts";

describe("blockedRange", () => {
  it.each([
    ["10.0.0.1", "private"],
    ["172.16.5.4", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["127.0.0.1", "loopback"],
    ["127.255.255.254", "loopback"],
    ["169.254.169.254", "linkLocal"],
    ["169.254.1.1", "linkLocal"],
    ["100.64.0.1", "carrierGradeNat"],
    ["100.127.255.255", "carrierGradeNat"],
    ["224.0.0.1", "multicast"],
    ["239.255.255.250", "multicast"],
    ["0.0.0.0", "unspecified"],
    ["0.1.2.3", "unspecified"],
    ["255.255.255.255", "broadcast"],
    ["192.0.0.1", "reserved"],
    ["192.0.2.1", "reserved"],
    ["198.18.0.1", "reserved"],
    ["198.51.100.7", "reserved"],
    ["203.0.113.9", "reserved"],
    ["240.0.0.1", "reserved"],
    ["::1", "loopback"],
    ["::", "unspecified"],
    ["fe80::1", "linkLocal"],
    ["fc00::1", "uniqueLocal"],
    ["fd00:ec2::254", "uniqueLocal"],
    ["fec0::1", "deprecatedSiteLocal"],
    ["ff02::1", "multicast"],
    ["::ffff:127.0.0.1", "ipv4Mapped(loopback)"],
    ["::ffff:7f00:1", "ipv4Mapped(loopback)"],
    ["::ffff:169.254.169.254", "ipv4Mapped(linkLocal)"],
    ["::ffff:10.1.2.3", "ipv4Mapped(private)"],
    ["::ffff:0:127.0.0.1", "rfc6145(loopback)"],
    ["::127.0.0.1", "notGlobal"],
    ["::8.8.8.8", "notGlobal"],
    ["::7f00:1", "notGlobal"],
    ["64:ff9b::a9fe:a9fe", "rfc6052(linkLocal)"],
    ["64:ff9b:1::7f00:1", "rfc6052(loopback)"],
    ["2002:7f00:1::1", "6to4(loopback)"],
    ["2002:c0a8:101::1", "6to4(private)"],
    ["2001::1", "teredo"],
    ["2001:db8::1", "reserved"],
    ["2001:2::1", "benchmarking"],
    ["100::1", "discard"],
    ["not-an-ip", "invalid"],
  ])("refuses %s (%s)", (ip, range) => {
    expect(blockedRange(ip)).toBe(range);
  });

  it.each([
    "8.8.8.8",
    "1.1.1.1",
    "93.184.215.14",
    "172.32.0.1",
    "100.128.0.1",
    "169.253.255.255",
    "2606:4700:4700::1111",
    "2001:4860:4860::8888",
    "::ffff:8.8.8.8",
    "64:ff9b::808:808",
    "2002:808:808::1",
  ])("lets %s through", (ip) => {
    expect(blockedRange(ip)).toBeNull();
  });
});
