%% Run directories written by tests: measurements with a known shape and seeded noise.
-module(beamscale_rundir_fixture).

-export([write/2, nasty/0]).

%% A string that breaks HTML if any page forgets to escape it.
nasty() -> <<"<script>alert('x')</script>&\"<b>"/utf8>>.

%% Spec keys: benches [{Name, Args, Seconds}], otps, flags, schedulers (lists), iterations,
%% noise (relative half-width), seed, slow (#{Name => Factor}), failures, sanity, host, clock.
write(Dir, Spec0) ->
    Spec = maps:merge(#{otps => [<<"otp">>], flags => [<<"default">>], schedulers => [1, 2],
                        iterations => 10, noise => 0.05, seed => 1, slow => #{},
                        failures => [], sanity => [], host => <<"test-host">>}, Spec0),
    #{benches := Benches, otps := Otps, flags := Flags, schedulers := Ss, iterations := N,
      noise := Noise, seed := Seed, slow := Slow} = Spec,
    S0 = rand:seed_s(exsss, {Seed, Seed + 1, Seed + 2}),
    Keys = [{B, A, T, O, F, S} || {B, A, T} <- Benches, O <- Otps, F <- Flags, S <- Ss],
    {Rows, _} = lists:mapfoldl(
                  fun({{B, A, T, O, F, S}, I}, St0) ->
                          {U, St} = rand:uniform_s(St0),
                          Secs = T / S * maps:get(B, Slow, 1.0) * (1 + Noise * (2 * U - 1)),
                          {beamscale_format_csv:line([B, B, A, O, F, S, 1, I, Secs]), St}
                  end, S0, [{K, I} || K <- Keys, I <- lists:seq(1, N)]),
    ok = filelib:ensure_path(filename:join(Dir, "output")),
    Header = [benchmark, phase, args, otp, erl_args, schedulers, nodes, iteration, seconds],
    ok = file:write_file(filename:join(Dir, "measurements.csv"),
                         [beamscale_format_csv:line(Header) | Rows]),
    FHeader = [benchmark, args, otp, erl_args, schedulers, nodes, iteration, reason],
    ok = file:write_file(filename:join(Dir, "failures.csv"),
                         [beamscale_format_csv:line(FHeader)
                          | [beamscale_format_csv:line(F) || F <- maps:get(failures, Spec)]]),
    ok = file:write_file(filename:join(Dir, "sanity.csv"),
                         [beamscale_format_csv:line([benchmark, verdict, detail])
                          | [beamscale_format_csv:line(V) || V <- maps:get(sanity, Spec)]]),
    Run = #{host => maps:get(host, Spec), cpu_model => <<"Test CPU">>, logical_cores => 2,
            config => #{name => filename:basename(list_to_binary(Dir)),
                        clock => maps:get(clock, Spec, wall),
                        erl_args => maps:from_list([{F, <<"+sbt db">>} || F <- Flags])},
            erls => maps:from_list([{O, #{otp_release => <<"25">>, emu_flavor => <<"jit">>}}
                                    || O <- Otps])},
    ok = file:write_file(filename:join(Dir, "run.json"), beamscale_format_json:encode(Run)),
    Dir.
