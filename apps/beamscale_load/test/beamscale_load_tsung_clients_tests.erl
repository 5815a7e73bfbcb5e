%% Tsung's `<clients>' (beamscale_load_tsung_clients): load nodes on other hosts, their
%% weights and `cpu', their own source addresses; a client here and one elsewhere refused.
-module(beamscale_load_tsung_clients_tests).

-include_lib("eunit/include/eunit.hrl").

-import(beamscale_load_tsung_tests, [xml/1, load/1, err/1]).

-include("beamscale_load_code_first.hrl").

%% Tsung's clients on other hosts: `cpu' load nodes there, `weight' their share of arrivals.
remote_clients_test() ->
    Top = "<clients><client host=\"10.0.0.2\" weight=\"3\" cpu=\"2\"/>"
          "<client host=\"hostb\"/></clients>",
    {S, _} = load(xml(#{top => Top})),
    ?assertEqual([#{host => "10.0.0.2", args => [], nodes => 2, weight => 3},
                  #{host => "hostb", args => [], nodes => 1, weight => 1}],
                 maps:get(load_nodes, S)).

%% A client on another host with `<ip>'s: its own source addresses (http_distributed.xml).
remote_client_ips_test() ->
    Top = "<clients><client host=\"hosta\"><ip value=\"10.0.0.2\"/><ip value=\"10.0.0.3\"/>"
          "</client><client host=\"hostb\" cpu=\"2\"><iprange value=\"10.0.1.1-2\"/>"
          "<ip scan=\"true\" value=\"eth1\"/></client><client host=\"hostc\"/></clients>",
    {S, _} = load(xml(#{top => Top})),
    ?assertEqual([#{host => "hosta", args => [], nodes => 1, weight => 1,
                    source_ips => [{10, 0, 0, 2}, {10, 0, 0, 3}]},
                  #{host => "hostb", args => [], nodes => 2, weight => 1,
                    source_ips => [{10, 0, 1, 1}, {10, 0, 1, 2}, {interface, "eth1"}]},
                  #{host => "hostc", args => [], nodes => 1, weight => 1}],
                 maps:get(load_nodes, S)),
    ?assertEqual([], maps:get(source_ips, S)),
    Bad = "<clients><client host=\"hostb\"><ip value=\"10.0.0.300\"/></client></clients>",
    ?assertNotEqual(nomatch, string:find(err(#{top => Bad}), "<ip value>: ")).

%% A client here and one elsewhere at once: refused.
remote_clients_refused_test_() ->
    Mixed = "<clients><client host=\"localhost\"/><client host=\"hostb\"/></clients>",
    [?_assertNotEqual(nomatch, string:find(err(#{top => Mixed}), "at once"))].
