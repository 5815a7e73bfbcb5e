-module(beamscale_icount_tests).
-include_lib("eunit/include/eunit.hrl").

%% The NIF builds (gcc and Valgrind's headers are installed here), is cached, and loads.
build_test_() ->
    {timeout, 120,
     fun() ->
             Release = erlang:system_info(otp_release),
             {ok, Base} = beamscale_icount:build(code:root_dir(), Release),
             ?assert(filelib:is_regular(Base ++ ".so")),
             ?assertEqual({ok, Base}, beamscale_icount:build(code:root_dir(), Release)),
             ?assertEqual(ok, beamscale_bench_icount:load(Base)),
             ?assertEqual(0, beamscale_bench_icount:on_valgrind())
     end}.

%% This VM has no PMU: the CPU's counter is detected absent, refused in words when asked for,
%% and auto falls back to Valgrind. On a host with one, pmu is taken and counts.
counter_test_() ->
    {timeout, 120,
     fun() ->
             case beamscale_bench_icount:pmu() of
                 ok ->
                     ?assertEqual({ok, pmu}, beamscale_icount:counter(auto)),
                     {ok, Fd} = beamscale_bench_icount:pmu_start(),
                     {ok, N} = beamscale_bench_icount:pmu_stop(Fd),
                     ?assert(N > 0);
                 {error, Why} ->
                     ?assert(is_list(Why)),
                     {error, {beamscale_icount, {no_pmu, Why}} = E} =
                         beamscale_icount:counter(pmu),
                     ?assertMatch({match, _}, re:run(beamscale_error:format(E), "no CPU")),
                     ?assertEqual({ok, valgrind}, beamscale_icount:counter(auto)),
                     ?assertEqual({ok, valgrind}, beamscale_icount:counter(valgrind))
             end
     end}.

%% A node counted by callgrind: one scheduler, no busy wait, under Valgrind with its dumps in
%% the directory given.
node_spec_test() ->
    #{schedulers := 1, flags := F, wrap := [V | Args], boot_timeout := T} =
        beamscale_icount:node_spec(valgrind, "/d", #{erl => "erl", flags => "+hms 100"}),
    ?assertMatch({match, _}, re:run(F, "^\\+hms 100 \\+sbwt none \\+sbwtdcpu none")),
    ?assertEqual("valgrind", filename:basename(V)),
    ?assert(lists:member("--callgrind-out-file=/d/cg.%p", Args)),
    ?assert(lists:member("--collect-atstart=no", Args)),
    ?assert(T > 30000),
    Pmu = beamscale_icount:node_spec(pmu, "/d", #{erl => "erl", flags => ""}),
    ?assertNot(is_map_key(wrap, Pmu)),
    %% Both counters: the counted heaps in carriers of their own, at the sample's heap size.
    [{match, [K]}, {match, [K]}] = [re:run(Fl, "\\+MHsbct ([0-9]+)", [{capture, [1], list}])
                                    || Fl <- [F, maps:get(flags, Pmu)]],
    ?assert(list_to_integer(K) * 1024 =< beamscale_bench_icount:heap_words() * 8).

format_error_test() ->
    [?assert(is_binary(iolist_to_binary(beamscale_icount:format_error(E))))
     || E <- [no_gcc, no_headers, no_valgrind, {no_pmu, "x"}, not_on_valgrind,
              {count_timeout, m}, {gcc, "/d", 1, <<"error">>}]].
