-module(beamscale_load_scenario_monitor_tests).
-include_lib("eunit/include/eunit.hrl").

check_test() ->
    [Local, Remote] = beamscale_load_scenario_monitor:check(
                        [#{host => "127.0.0.1", processes => ["nginx", {pid, 7},
                                                             {pidfile, "/run/x.pid"}]},
                         #{host => "db", args => ["-p", "2222"], user => "lab", erl => "/o/erl"}]),
    ?assertEqual(#{host => "127.0.0.1", type => erlang, ssh => none, erl => "erl",
                   processes => [{name, "nginx"}, {pid, 7}, {pidfile, "/run/x.pid"}]}, Local),
    ?assertEqual(#{host => "db", type => erlang, processes => [], erl => "/o/erl",
                   ssh => #{args => ["-p", "2222"], user => "lab"}}, Remote).

errors_test_() ->
    Err = fun(V) ->
                  try beamscale_load_scenario_monitor:check(V), none
                  catch throw:{bad, Path, Msg} -> {Path, lists:flatten(io_lib:format("~ts", [Msg]))}
                  end
          end,
    [?_assertMatch({[], "expected a list" ++ _}, Err(#{host => "h"})),
     ?_assertMatch({[], "h: unknown key nope" ++ _}, Err([#{host => "h", nope => 1}])),
     ?_assertMatch({[processes], "h: \"a/b\": expected a command name" ++ _},
                   Err([#{host => "h", processes => ["a/b"]}])),
     ?_assertMatch({[processes], "h: {pid,0}" ++ _},
                   Err([#{host => "h", processes => [{pid, 0}]}])),
     ?_assertMatch({[user], "h: expected a string not starting with -"},
                   Err([#{host => "h", user => "-oProxyCommand=x"}])),
     ?_assertMatch({[], "host h is given twice"}, Err([#{host => "h"}, #{host => "h"}])),
     ?_assertMatch({[type], _}, Err([#{host => "h", type => nagios}])),
     ?_assertMatch({[community], _}, Err([#{host => "h", type => munin, community => "c"}])),
     ?_assertMatch([#{type := snmp, port := 161, community := "public"}],
                   beamscale_load_scenario_monitor:check([#{host => "h", type => snmp}])),
     ?_assertMatch({[port], _}, Err([#{host => "h", port => 4949}])),
     ?_assertMatch({[port], _}, Err([#{host => "h", type => munin, port => 0}])),
     ?_assertMatch([#{type := munin, port := 4949}],
                   beamscale_load_scenario_monitor:check([#{host => "h", type => munin}]))].
