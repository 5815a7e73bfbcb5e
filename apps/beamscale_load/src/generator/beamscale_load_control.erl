%% @doc What `beamscale ctl' does to a running load, for `beamscale_load_run''s controller (its
%% state is the controller's map): status, stop, a new arrival rate, users added or ended. The
%% rate and the users are split over the load nodes' agents by their weights, as the scenario's
%% phases are; each change is an event the controller keeps and hands to `on_event' (and one
%% made elsewhere, given as its text). An externally_controlled phase (`beamscale_load_executor')
%% takes its number of users from here.
-module(beamscale_load_control).

-export([handle/3, offered/3, stop_arrivals/2, stall/3]).

%% @doc `Command' in second `N' of the load: the reply, and the controller's state after.
-spec handle(beamscale_load_run:command(), pos_integer(), map()) -> {map(), map()}.
handle(status, N, St) -> {status(N, St), St};
%% A change made elsewhere (an amoc throttle's rate, `ctl throttle'), kept as the others are.
handle({event, Text}, _N, St) -> {#{ok => Text}, event(Text, St)};
handle(_, _N, #{interrupted_at := _} = St) -> {#{error => <<"the load is stopping">>}, St};
handle(stop, N, St) -> {#{ok => <<"stopping">>}, event(<<"stop">>, stop_arrivals(N, St))};
%% Several scenarios side by side have no one phase whose rate or users to set.
handle(_, _N, #{scenario := #{scenarios := [_ | _] = Many}} = St) ->
    refuse("this load runs ~b scenarios side by side (~ts): ctl rate and users set one phase "
           "of a load of phases only", [length(Many), lists:join(", ", [atom_to_binary(Name)
                                                                       || {Name, _} <- Many])],
           St);
handle({rate, R}, N, #{scenario := Sc} = St) ->
    case beamscale_load_scenario:phase_at(Sc, now_s(St)) of
        drain -> {#{error => <<"the phases are over: no arrivals to set">>}, St};
        #{name := Phase, executor := #{kind := Kind}} ->
            refuse("phase ~ts is run by ~ts: ctl rate sets a Tsung phase's arrival rate only",
                   [Phase, Kind], St);
        #{name := Phase} ->
            tell(fun(Part) -> {set_rate, R * Part} end, St),
            Text = iolist_to_binary(["rate ", fmt(R)]),
            {status(N, St#{rate := {Phase, R}}), event(Text, St#{rate := {Phase, R}})}
    end;
%% In an externally_controlled phase `users +K' / `-K' move its number of users by K (at least
%% 0); elsewhere they start users beside the phase's or end users in flight.
handle({users, K}, N, St) ->
    Text = iolist_to_binary(io_lib:format("users ~s~b", [[$+ || K >= 0], K])),
    case external(St) of
        {external, Phase, Now, Max} -> set_users(max(0, Now + K), Phase, Max, Text, N, St);
        _ -> users(K, St), {status(N, St), event(Text, St)}
    end;
handle({set_users, U}, N, St) ->
    case external(St) of
        {external, Phase, _Now, Max} ->
            set_users(U, Phase, Max, iolist_to_binary(["users ", integer_to_binary(U)]), N, St);
        drain -> {#{error => <<"the phases are over: no users to set">>}, St};
        {other, Phase, Kind} ->
            refuse("phase ~ts is run by ~ts: users N sets an externally_controlled phase's "
                   "users only (users +N / -N start or end users beside it)", [Phase, Kind], St)
    end.

%% @doc The phase at `T' seconds and its arrival rate, or the one `ctl' set in that phase (of
%% several scenarios, those running: `beamscale_load_scenario:phase_at/2').
-spec offered(beamscale_load_scenario:scenario(), number(), none | {atom(), number()}) ->
    {atom() | binary(), float()}.
offered(Sc, T, Set) ->
    case {beamscale_load_scenario:phase_at(Sc, T), Set} of
        {drain, _} -> {drain, 0.0};
        {#{name := Name}, {Name, R}} -> {Name, float(R)};
        {#{name := Name, rate := Rate}, _} -> {Name, Rate}
    end.

%% @doc Arrivals stop (SIGTERM, `ctl stop'): the users in flight have the drain.
-spec stop_arrivals(pos_integer(), map()) -> map().
stop_arrivals(N, #{live := Live} = St) ->
    maps:foreach(fun(A, _) -> A ! stop_arrivals end, Live),
    St#{interrupted_at => N}.

%% @doc A launcher on `Node' that could not run (its node SIGSTOPped, a frozen host) from
%% `at_s' for `lasted_s', its `late' users due meanwhile not started (none when a closed
%% executor's tick was late: its users run back to back): an event, as a change of `ctl' is, at
%% the time it began.
-spec stall(node(), #{at_s := float(), lasted_s := float(), late := non_neg_integer()},
            map()) -> map().
stall(Node, #{at_s := At, lasted_s := Lasted, late := Late}, St) ->
    #{events := Events, opts := Opts} = St,
    Where = case Node =:= node() of
                true -> <<"beamscale's node (its users)">>;
                false -> ["load node ", atom_to_binary(Node)]
            end,
    Text = iolist_to_binary(stall_text(Where, Lasted, Late)),
    Event = #{t_s => max(At, 0.0), event => Text, node => Node, lasted_s => Lasted, late => Late},
    _ = (maps:get(on_event, Opts))(Event),
    St#{events := [Event | Events]}.

%%% Internals

stall_text(Where, Lasted, 0) ->
    io_lib:format("~ts stalled ~.1f s: its users run back to back, none late", [Where, Lasted]);
stall_text(Where, Lasted, Late) ->
    io_lib:format("~ts stalled ~.1f s: ~b users due meanwhile counted late, not started",
                  [Where, Lasted, Late]).

%% The phase of the moment: an externally_controlled one with its users now (the executor's, or
%% the last number `ctl' set in it) and its bound, or another one's name and kind.
external(#{scenario := Sc} = St) ->
    case beamscale_load_scenario:phase_at(Sc, now_s(St)) of
        drain -> drain;
        #{name := Phase, executor := #{kind := externally_controlled, users := U0,
                                      max_in_flight := Max}} ->
            case maps:get(users_set, St, none) of
                {Phase, U} -> {external, Phase, U, Max};
                _ -> {external, Phase, U0, Max}
            end;
        #{name := Phase, executor := #{kind := Kind}} -> {other, Phase, Kind};
        #{name := Phase} -> {other, Phase, tsung}
    end.

set_users(U, Phase, Max, _Text, _N, St) when U > Max ->
    refuse("users ~b is above phase ~ts's max_users, ~b", [U, Phase, Max], St);
set_users(U, Phase, _Max, Text, N, #{weights := Ws, index := Index, live := Live} = St) ->
    maps:foreach(fun(A, _) ->
                         A ! {ctl, {set_users, beamscale_load_agent:split(U, maps:get(A, Index),
                                                                          Ws)}}
                 end, Live),
    St1 = St#{users_set => {Phase, U}},
    {status(N, St1), event(Text, St1)}.

%% Users started now (K > 0) or ended in flight, each agent its share.
users(K, #{weights := Ws, index := Index, live := Live}) ->
    Msg = case K >= 0 of true -> add_users; false -> remove_users end,
    maps:foreach(fun(A, _) ->
                         A ! {ctl, {Msg, beamscale_load_agent:split(abs(K), maps:get(A, Index),
                                                                    Ws)}}
                 end, Live).

refuse(Format, Args, St) ->
    {#{error => iolist_to_binary(io_lib:format(Format, Args))}, St}.

%% Each live agent its share of a figure: `F(Part)', Part its weight over the sum.
tell(F, #{live := Live, weights := Ws, index := Index}) ->
    Sum = lists:sum(Ws),
    maps:foreach(fun(A, _) -> A ! {ctl, F(lists:nth(maps:get(A, Index), Ws) / Sum)} end, Live).

%% In an externally_controlled phase also the users it keeps busy and their bound.
status(N, #{scenario := Sc, total := Total} = St) ->
    {Phase, Rate} = offered(Sc, now_s(St), maps:get(rate, St)),
    Users = case external(St) of
                {external, _, U, Max} -> #{users_target => U, max_users => Max};
                _ -> #{}
            end,
    Users#{t_s => now_s(St), second => N, phase => Phase, rate => Rate,
      users_in_flight => maps:get(sessions_started, Total) - maps:get(sessions_done, Total)
                             - maps:get(sessions_stopped, Total, 0),
      sessions_started => maps:get(sessions_started, Total),
      requests => maps:get(requests, Total), errors => maps:get(errors, Total),
      stopping => is_map_key(interrupted_at, St)}.

event(Text, #{events := Events, opts := Opts} = St) ->
    Event = #{t_s => now_s(St), event => Text},
    _ = (maps:get(on_event, Opts))(Event),
    St#{events := [Event | Events]}.

now_s(#{start := Start}) ->
    erlang:convert_time_unit(erlang:monotonic_time() - Start, native, millisecond) / 1000.

fmt(R) when is_integer(R) -> integer_to_binary(R);
fmt(R) -> float_to_binary(R, [short]).
