%% @doc The live page of a load run and its `/live.json' (pure). The figures of the latest second
%% (offered and achieved arrivals, requests, latency corrected and not, errors, users in flight,
%% the target's CPU, scheduler utilisation and busy-wait) and the run's charts so far, drawn
%% server-side by the same code as the final `index.html' (`beamscale_report_load:graphs/1',
%% `beamscale_report_load_extra', `beamscale_report_cpu'). The page carries the same HTML as
%% `/live.json''s `html' and a small inline script that fetches `/live.json' every second and puts
%% its `figures' (text) and `html' (escaped here) in place: no reload, no external file.
-module(beamscale_report_live).

-export([load_page/1, load_json/1, load_figures/1, run_page/1, run_json/1]).
-export_type([data/0, run_data/0]).

%% run: `#{label, phases (name, duration_s, rate), msacc}' with binary keys; summary: as
%% `summary.json' (binary keys) over the seconds so far; samples, lcnt: rows of samples.csv and
%% lcnt.csv so far; state: `running' or `done'; token: the run's control token, for the
%% buttons that steer it (`none' or absent: no buttons).
-type data() :: #{run := beamscale_format_json:object(), summary := beamscale_format_json:object(),
                  samples := [#{atom() => binary()}], lcnt := [#{atom() => binary()}],
                  state := running | done, token => binary() | none}.

%% A suite run so far: iterations done and expected, and the run page's data as
%% `beamscale_writer:load/1' reads it (`none' before the first measurement).
-type run_data() :: #{done := non_neg_integer(), expected := non_neg_integer(),
                      state := running | done, report := beamscale_report_run:data() | none}.

%% The script: every second, /live.json into the page; when it fails, the run is over (the
%% server closes with the run) and the last figures stay.
-define(SCRIPT, <<"(function(){var n=0;"
    "function show(j){var f=j.figures||{};"
    "document.querySelectorAll('[data-key]').forEach(function(e){"
    "var v=f[e.dataset.key];e.textContent=(v==null)?'':v;});"
    "document.getElementById('live').innerHTML=j.html||'';"
    "document.getElementById('state').textContent=j.state;"
    "n++;document.body.dataset.updates=n;}"
    "function poll(){fetch('/live.json',{cache:'no-store'})"
    ".then(function(r){if(!r.ok)throw r.status;return r.json();})"
    ".then(function(j){show(j);if(j.state!=='done')setTimeout(poll,1000);})"
    ".catch(function(){document.getElementById('state').textContent="
    "'ended (the server closed with the run): the last figures stay';});}"
    "setTimeout(poll,1000);})();">>).
%% The buttons: the command POSTed to /control with the run's token (the section's), the
%% load's answer shown beside them.
-define(CTL_SCRIPT, <<"(function(){var s=document.getElementById('ctl');if(!s)return;"
    "function val(id){return document.getElementById(id).value;}"
    "s.querySelectorAll('button').forEach(function(b){b.addEventListener('click',function(){"
    "var c=b.dataset.cmd;if(c==='rate')c='rate '+val('ctl-rate');"
    "if(c==='users'){var n=parseInt(val('ctl-users'),10);c='users '+(n>=0?'+':'')+n;}"
    "fetch('/control',{method:'POST',headers:{'X-Beamscale-Token':s.dataset.token},body:c})"
    ".then(function(r){return r.text();}).then(function(t){"
    "document.getElementById('ctl-out').textContent=t;});});});})();">>).

%% @doc The page: the figures and charts as they are now, and the script that keeps them fresh.
-spec load_page(data()) -> iodata().
load_page(#{run := Run, state := State} = Data) ->
    Title = ["beamscale live: ", text(maps:get(<<"label">>, Run, <<>>))],
    Figures = load_figures(Data),
    %% The figures of the run files' table (`beamscale_format_load'), in its order; the
    %% key is in `figures' of /live.json and the `data-key' of the figure's cell.
    Rows = [[beamscale_format_load:heading(E),
             {safe, beamscale_report_html:el(span, [{'data-key', K}],
                                             maps:get(K, Figures))}]
            || #{key := K0} = E <- beamscale_format_load:live(), K <- [atom_to_binary(K0)]],
    beamscale_report_html:page(
      Title, <<"#figures td{min-width:6em}">>,
      [beamscale_report_html:el(h1, Title),
       beamscale_report_html:el(p, {safe, ["State: ", beamscale_report_html:el(
                                                        span, [{id, "state"}], State)]}),
       beamscale_report_html:el(section, [{id, "figures"}],
                                {safe, beamscale_report_html:table(["", ""], Rows)}),
       controls(maps:get(token, Data, none), State),
       beamscale_report_html:el('div', [{id, "live"}], {safe, live_html(Data)}),
       beamscale_report_html:el(script, {safe, ?SCRIPT})]).

%% Steer the run (`beamscale ctl' from the page): stop, a rate, users added or ended.
controls(Token, running) when is_binary(Token) ->
    H = fun beamscale_report_html:el/3,
    Button = fun(Cmd, Label) -> H(button, [{'data-cmd', Cmd}, {type, "button"}], Label) end,
    Input = fun(Id, Step) -> H(input, [{id, Id}, {type, "number"}, {step, Step}], "") end,
    H(section, [{id, "ctl"}, {'data-token', Token}],
      {safe, [beamscale_report_html:el(h2, "Steer the load"),
              Button("stop", "stop"), " ", Input("ctl-rate", "any"),
              Button("rate", "set rate (users/s)"), " ", Input("ctl-users", "1"),
              Button("users", "add (+N) or end (-N) users"), " ",
              H(output, [{id, "ctl-out"}], ""),
              beamscale_report_html:el(script, {safe, ?CTL_SCRIPT})]});
controls(_Token, _State) -> [].

%% @doc `/live.json': the state, the run's label, the latest second's figures as numbers, the
%% same as text (`figures'), errors by reason over the run, the target nodes' latest samples, the
%% phase boundaries and the charts' HTML.
-spec load_json(data()) -> iodata().
load_json(#{run := Run, summary := Summary, samples := Samples, state := State} = Data) ->
    Last = last_second(Summary),
    %% The figures of the latest second as numbers, 0 before the first (the phase: null).
    Numbers = maps:from_list([{K, case figure(From, Last, Summary, #{}) of
                                      null when K =/= phase -> 0;
                                      V -> V
                                  end}
                              || #{key := K, from := From} <- beamscale_format_load:live(),
                                 not is_tuple(From) orelse element(1, From) =/= target]),
    beamscale_format_json:encode(
      Numbers#{kind => load, state => State, label => get(Run, <<"label">>, null),
               latency_corrected => get(Last, <<"latency_corrected">>, #{}),
               latency_uncorrected => get(Last, <<"latency_uncorrected">>, #{}),
               errors_by_reason => get(Summary, <<"errors_by_reason">>, #{}),
               target => latest_samples(Samples), phases => boundaries(Run),
               figures => load_figures(Data), html => iolist_to_binary(live_html(Data))}).

%% @doc The figures at the top as text, by key (what the page shows and the script puts there).
-spec load_figures(data()) -> #{binary() => binary()}.
load_figures(#{summary := Summary, samples := Samples}) ->
    Last = last_second(Summary),
    Target = case latest_samples(Samples) of
                 [T | _] -> T;
                 [] -> #{}
             end,
    maps:from_list([{atom_to_binary(K), show(figure(From, Last, Summary, Target))}
                    || #{key := K, from := From} <- beamscale_format_load:live()]).

%% A live figure from where the table says it comes from (null: not there yet).
figure({second, Path}, Last, _Summary, _Target) ->
    lists:foldl(fun(K, M) -> get(M, atom_to_binary(K), null) end, Last, Path);
figure({target, K}, _Last, _Summary, Target) -> get(Target, K, null);
figure(in_flight, _Last, Summary, _Target) -> in_flight(Summary).

%% @doc The live page of a suite run: progress, then the run page as it is so far (the same
%% sections as the final `index.html', rendered by `beamscale_report_run').
-spec run_page(run_data()) -> iodata().
run_page(#{state := State} = Data) ->
    Title = "beamscale live: suite run",
    Figures = run_figures(Data),
    Rows = [[Label, {safe, beamscale_report_html:el(span, [{'data-key', K}],
                                                    maps:get(K, Figures))}]
            || {K, Label} <- [{<<"done">>, "iterations done"}, {<<"expected">>, "expected"},
                              {<<"percent">>, "%"}]],
    beamscale_report_html:page(
      Title, <<>>,
      [beamscale_report_html:el(h1, Title),
       beamscale_report_html:el(p, {safe, ["State: ", beamscale_report_html:el(
                                                        span, [{id, "state"}], State)]}),
       beamscale_report_html:el(section, [{id, "figures"}],
                                {safe, beamscale_report_html:table(["", ""], Rows)}),
       beamscale_report_html:el('div', [{id, "live"}], {safe, run_html(Data)}),
       beamscale_report_html:el(script, {safe, ?SCRIPT})]).

%% @doc `/live.json' of a suite run: progress, every point so far (benchmark, environment,
%% argument set, median and its interval, as `summary.json' has them) and the page's HTML.
-spec run_json(run_data()) -> iodata().
run_json(#{done := Done, expected := Expected, state := State, report := Report} = Data) ->
    Points = case Report of
                 #{run := Run, rows := Rows} ->
                     {ok, Summary} = beamscale_format_json:decode(
                                       beamscale_report_summary:json(Run, Rows)),
                     Summary;
                 none -> #{}
             end,
    beamscale_format_json:encode(#{kind => run, state => State, done => Done,
                                   expected => Expected, summary => Points,
                                   figures => run_figures(Data),
                                   html => iolist_to_binary(run_html(Data))}).

%%% Internals

run_figures(#{done := Done, expected := Expected}) ->
    #{<<"done">> => show(Done), <<"expected">> => show(Expected),
      <<"percent">> => show(round(100 * Done / max(Expected, 1)))}.

%% The run page's body: what `beamscale_report_run:index/1' puts between the body tags.
run_html(#{report := none}) ->
    beamscale_report_html:el(p, "Waiting for the first measurement.");
run_html(#{report := Report}) ->
    Page = iolist_to_binary(beamscale_report_run:index(Report)),
    [_, AfterBody] = binary:split(Page, <<"<body>">>),
    [Body | _] = binary:split(AfterBody, <<"</body>">>),
    Body.

%% The charts so far: the same as the final page's "Over time", latency distribution, errors by
%% reason and target sections.
live_html(#{run := Run, summary := Summary, samples := Samples, lcnt := Lcnt}) ->
    case get(Summary, <<"per_second">>, []) of
        [] -> beamscale_report_html:el(p, "Waiting for the first second of the run.");
        _ ->
            Phases = beamscale_report_load_extra:phase_markers(Summary),
            Charts = [beamscale_report_svg:line_chart(
                        Series, #{title => T, x_label => "seconds", y_label => Y, unit => U,
                                  x_ticks => auto, markers => Phases,
                                  y_scale => beamscale_report_load_extra:y_scale(U)})
                      || {T, Y, U, Series} <- beamscale_report_load:graphs(Summary)],
            [beamscale_report_html:section(
               "Over time", beamscale_report_html:el(section, [{class, "charts"}],
                                                     {safe, Charts})),
             beamscale_report_load_extra:events(Summary),
             beamscale_report_html:section("Latency distribution (the run so far)",
                                           beamscale_report_load_extra:distribution(Summary)),
             beamscale_report_html:section("Errors by reason (the run so far)",
                                           reasons(get(Summary, <<"errors_by_reason">>, #{}))),
             [beamscale_report_html:section(
                "The target: CPU, schedulers, msacc",
                beamscale_report_cpu:section(Samples, Lcnt, get(Run, <<"msacc">>, null)))
              || Samples =/= []]]
    end.

reasons(ByReason) when map_size(ByReason) =:= 0 -> beamscale_report_html:el(p, "No errors.");
reasons(ByReason) ->
    Sorted = lists:sort(fun({R1, N1}, {R2, N2}) -> {-N1, R1} =< {-N2, R2} end,
                        maps:to_list(ByReason)),
    beamscale_report_html:table(["error reason", "count"], [[R, N] || {R, N} <- Sorted]).

last_second(Summary) ->
    case get(Summary, <<"per_second">>, []) of
        [] -> #{};
        Secs -> lists:last(Secs)
    end.

%% Users started and not yet done (nor stopped by `ctl users -N'), over the seconds so far.
in_flight(Summary) ->
    Secs = get(Summary, <<"per_second">>, []),
    Sum = fun(K) -> lists:sum([N || S <- Secs, N <- [get(S, K, 0)], is_integer(N)]) end,
    Sum(<<"sessions_started">>) - Sum(<<"sessions_done">>) - Sum(<<"sessions_stopped">>).

%% Each sampled node's latest good row: OS CPU, utilisation, busy-wait (below 0 is noise of
%% the estimate: shown as 0, as the final page's clamp does).
latest_samples(Samples) ->
    Latest = lists:foldl(fun(#{node := N, status := <<"ok">>} = R, Acc) -> Acc#{N => R};
                            (_, Acc) -> Acc
                         end, #{}, Samples),
    [#{node => N, os_cpu_pct => number(R, os_cpu_pct), util_pct => number(R, util_pct),
       busy_wait_pct => max(0.0, number(R, busy_wait_pct))}
     || {N, R} <- lists:sort(maps:to_list(Latest))].

number(Row, K) ->
    case beamscale_format_csv:number(maps:get(K, Row, <<>>)) of
        V when is_number(V) -> float(V);
        undefined -> 0.0
    end.

%% Where each phase starts and ends, in seconds from the run's start: after the one before, or
%% at its own start (one of several scenarios side by side).
boundaries(Run) ->
    {Bs, _} = lists:mapfoldl(
                fun(P, After) ->
                        D = case get(P, <<"duration_s">>, 0) of
                                N when is_number(N) -> N;
                                _ -> 0
                            end,
                        From = case get(P, <<"start_s">>, null) of
                                   S when is_number(S) -> S;
                                   _ -> After
                               end,
                        {#{name => get(P, <<"name">>, null), from_s => From, to_s => From + D,
                           rate => get(P, <<"rate">>, null)}, From + D}
                end, 0, get(Run, <<"phases">>, [])),
    Bs.

show(null) -> <<>>;
show(V) when is_number(V) -> beamscale_report_svg:fmt(V);
show(V) when is_binary(V) -> V;
show(V) -> text(V).

text(V) when is_binary(V) -> V;
text(V) -> iolist_to_binary(io_lib:format("~0tp", [V])).

get(M, K, Default) when is_map(M) -> maps:get(K, M, Default);
get(_, _, Default) -> Default.
