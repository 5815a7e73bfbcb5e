-module(beamscale_stats_samples_tests).
-include_lib("proper/include/proper.hrl").
-include_lib("eunit/include/eunit.hrl").

row(B, E, A, Node, Status, Interval, Cpu) ->
    #{benchmark => B, env => E, args => A, node => Node, status => Status,
      interval_s => Interval, os_cpu_pct => Cpu, msacc_sched_sleep => <<"50.0">>}.

summarise_test() ->
    Rows = [row(<<"b">>, <<"e1">>, <<"[1]">>, <<"n1">>, <<"ok">>, <<"1.0">>, <<"10.0">>),
            row(<<"b">>, <<"e1">>, <<"[1]">>, <<"n2">>, <<"ok">>, <<"1.0">>, <<"30">>),
            row(<<"b">>, <<"e1">>, <<"[1]">>, <<"n2">>, <<"down">>, <<"0.0">>, <<>>),
            row(<<"b">>, <<"e2">>, <<"[1]">>, <<"n3">>, <<"ok">>, <<"0.5">>, <<"40.0">>),
            row(<<"b">>, <<"e2">>, <<"[1]">>, <<"n3">>, <<"ok">>, <<"1.5">>, <<"0.0">>),
            %% A host's and an OS process's rows are not counted with the nodes'.
            row(<<"b">>, <<"e2">>, <<"[1]">>, <<"host:h">>, <<"ok">>, <<"1.0">>, <<"90.0">>),
            (row(<<"b">>, <<"e2">>, <<"[1]">>, <<"nginx@h">>, <<"ok">>, <<"1.0">>, <<"90.0">>))#{
              pids => <<"3">>}],
    [S1, S2] = beamscale_stats_samples:summarise(Rows),
    ?assertMatch(#{env := <<"e1">>, samples := 2, nodes := 2, down := 1, os_cpu_pct := 20.0,
                   msacc_sched_sleep := 50.0, util_pct := undefined}, S1),
    %% Weighted by interval: (40 * 0.5 + 0 * 1.5) / 2
    ?assertMatch(#{env := <<"e2">>, samples := 2, nodes := 1, os_cpu_pct := 10.0}, S2),
    [Header | Lines] = binary:split(iolist_to_binary(beamscale_stats_samples:csv(Rows)),
                                    <<"\n">>, [global, trim]),
    ?assertMatch(<<"benchmark,env,args,samples,nodes,down,os_cpu_pct,", _/binary>>, Header),
    ?assertEqual(2, length(Lines)).

%% With equal intervals the mean lies between the smallest and the largest value.
prop_mean_within_range() ->
    ?FORALL(Cpus, non_empty(list(range(0, 400))),
            begin
                Rows = [row(<<"b">>, <<"e">>, <<>>, <<"n">>, <<"ok">>, <<"1.0">>,
                            integer_to_binary(C)) || C <- Cpus],
                [#{os_cpu_pct := M, samples := N}] = beamscale_stats_samples:summarise(Rows),
                N =:= length(Cpus) andalso M >= lists:min(Cpus) - 1.0e-9
                    andalso M =< lists:max(Cpus) + 1.0e-9
            end).

mean_prop_test() ->
    ?assert(proper:quickcheck(prop_mean_within_range(), [{numtests, 200}, {to_file, user}])).
