# ruff: noqa: E501  (data tables: one row per line)
"""Plain geographic facts the maps world is built on: real towns and cities (approximate centre
coordinates), and a few real landmarks with their street addresses and coordinates.

Nothing here is seeded; the places around each town (restaurants, rest stops, viewpoints ...),
their ratings and the elevation field are generated from the seed in :mod:`.maps`.

Town rows: ``name | country | admin (state/region code, or "") | lat | lng | size | aliases``,
size ``S`` town, ``M`` city, ``L`` metropolis, ``X`` city-state (see :data:`SIZES`). Landmark
rows: ``name | aliases | street line | town | lat | lng | types`` (the street line is matched
as whole words, so an address that names it finds the landmark).
"""

from __future__ import annotations

SIZES: dict[str, tuple[float, int]] = {
    "S": (28.0, 180),
    "M": (30.0, 450),
    "L": (26.0, 1600),
    "X": (22.0, 20000),
}
"""Size code → (radius of the town's place disc in km, number of seeded places)."""

LANDMASS: dict[str, str] = {
    "Malaysia": "afro-eurasia",
    "Singapore": "afro-eurasia",
    "France": "afro-eurasia",
    "Italy": "afro-eurasia",
    "United Arab Emirates": "afro-eurasia",
    "United States": "north-america",
    "Canada": "north-america",
    "Japan": "japan",
    "Australia": "australia",
}
"""Country → landmass: driving, walking and bicycling need both ends on the same one."""

TOWNS = """
Singapore|Singapore||1.3521|103.8198|X|SG;Singapura
Johor Bahru|Malaysia|Johor|1.4927|103.7414|M|JB;Johor Baru
Kulai|Malaysia|Johor|1.6627|103.6022|S|
Pontian|Malaysia|Johor|1.4866|103.3896|S|Pontian Kechil
Kota Tinggi|Malaysia|Johor|1.7381|103.8999|S|
Kluang|Malaysia|Johor|2.0251|103.3328|S|
Ayer Hitam|Malaysia|Johor|1.9167|103.1833|S|Air Hitam
Yong Peng|Malaysia|Johor|2.0136|103.0659|S|
Batu Pahat|Malaysia|Johor|1.8548|102.9325|S|
Muar|Malaysia|Johor|2.0442|102.5689|S|
Tangkak|Malaysia|Johor|2.2673|102.5453|S|
Segamat|Malaysia|Johor|2.5148|102.8158|S|
Mersing|Malaysia|Johor|2.4312|103.8405|S|
Malacca|Malaysia|Melaka|2.1896|102.2501|M|Melaka;Malacca City
Alor Gajah|Malaysia|Melaka|2.3804|102.2089|S|
Jasin|Malaysia|Melaka|2.3096|102.4312|S|
Port Dickson|Malaysia|Negeri Sembilan|2.5228|101.7959|S|
Seremban|Malaysia|Negeri Sembilan|2.7259|101.9424|M|
Nilai|Malaysia|Negeri Sembilan|2.8196|101.7960|S|
Putrajaya|Malaysia|Putrajaya|2.9264|101.6964|S|
Kajang|Malaysia|Selangor|2.9935|101.7874|S|
Kuala Lumpur|Malaysia|Kuala Lumpur|3.1390|101.6869|L|KL
Petaling Jaya|Malaysia|Selangor|3.1073|101.6067|M|PJ
Shah Alam|Malaysia|Selangor|3.0733|101.5185|M|
Klang|Malaysia|Selangor|3.0449|101.4456|S|
Los Angeles|United States|CA|34.0522|-118.2437|L|LA
Anaheim|United States|CA|33.8366|-117.9143|M|
Santa Clarita|United States|CA|34.3917|-118.5426|S|
Palmdale|United States|CA|34.5794|-118.1165|S|
Lancaster|United States|CA|34.6868|-118.1542|S|
Gorman|United States|CA|34.7958|-118.8518|S|
Tehachapi|United States|CA|35.1322|-118.4490|S|
Bakersfield|United States|CA|35.3733|-119.0187|M|
Buttonwillow|United States|CA|35.4005|-119.4696|S|
Lost Hills|United States|CA|35.6163|-119.6943|S|
Delano|United States|CA|35.7688|-119.2471|S|
Porterville|United States|CA|36.0652|-119.0168|S|
Tulare|United States|CA|36.2077|-119.3473|S|
Visalia|United States|CA|36.3302|-119.2921|S|
Hanford|United States|CA|36.3275|-119.6457|S|
Kettleman City|United States|CA|36.0083|-119.9618|S|
Avenal|United States|CA|36.0041|-120.1290|S|
Coalinga|United States|CA|36.1397|-120.3602|S|
Fresno|United States|CA|36.7378|-119.7871|M|
Madera|United States|CA|36.9613|-120.0607|S|
Firebaugh|United States|CA|36.8588|-120.4560|S|
Oakhurst|United States|CA|37.3280|-119.6493|S|
Mariposa|United States|CA|37.4849|-119.9663|S|
Yosemite Valley|United States|CA|37.7456|-119.5936|S|Yosemite;Yosemite National Park;Yosemite Village
Merced|United States|CA|37.3022|-120.4830|S|
Los Banos|United States|CA|37.0583|-120.8499|S|
Santa Nella|United States|CA|37.0966|-121.0166|S|
Modesto|United States|CA|37.6391|-120.9969|M|
Stockton|United States|CA|37.9577|-121.2908|M|
Paso Robles|United States|CA|35.6266|-120.6910|S|
San Luis Obispo|United States|CA|35.2828|-120.6596|S|SLO
Santa Maria|United States|CA|34.9530|-120.4357|S|
Santa Barbara|United States|CA|34.4208|-119.6982|M|
Ventura|United States|CA|34.2746|-119.2290|S|
King City|United States|CA|36.2127|-121.1260|S|
Salinas|United States|CA|36.6777|-121.6555|S|
Monterey|United States|CA|36.6002|-121.8947|S|
Gilroy|United States|CA|37.0058|-121.5683|S|
San Jose|United States|CA|37.3382|-121.8863|L|
San Francisco|United States|CA|37.7749|-122.4194|L|SF
Oakland|United States|CA|37.8044|-122.2712|M|
Seattle|United States|WA|47.6062|-122.3321|L|
Bremerton|United States|WA|47.5673|-122.6326|S|
Renton|United States|WA|47.4829|-122.2171|S|
Kent|United States|WA|47.3809|-122.2348|S|
Auburn|United States|WA|47.3073|-122.2285|S|
Federal Way|United States|WA|47.3223|-122.3126|S|
Enumclaw|United States|WA|47.2043|-121.9915|S|
Tacoma|United States|WA|47.2529|-122.4443|M|
Puyallup|United States|WA|47.1854|-122.2929|S|
Lakewood|United States|WA|47.1718|-122.5185|S|
Yelm|United States|WA|46.9421|-122.6057|S|
Olympia|United States|WA|47.0379|-122.9007|S|
Lacey|United States|WA|47.0343|-122.8232|S|
Tumwater|United States|WA|47.0073|-122.9093|S|
Shelton|United States|WA|47.2151|-123.1007|S|
Aberdeen|United States|WA|46.9754|-123.8157|S|
Centralia|United States|WA|46.7162|-122.9543|S|
Chehalis|United States|WA|46.6621|-122.9640|S|
Morton|United States|WA|46.5584|-122.2751|S|
Packwood|United States|WA|46.6071|-121.6712|S|
Castle Rock|United States|WA|46.2751|-122.9076|S|
Kelso|United States|WA|46.1468|-122.9084|S|
Longview|United States|WA|46.1382|-122.9382|S|
Kalama|United States|WA|46.0084|-122.8449|S|
Woodland|United States|WA|45.9046|-122.7437|S|
Vancouver|United States|WA|45.6387|-122.6615|M|
Portland|United States|OR|45.5152|-122.6784|L|
Paris|France|Île-de-France|48.8566|2.3522|L|
Roissy-en-France|France|Île-de-France|49.0040|2.5170|S|Roissy
Fontainebleau|France|Île-de-France|48.4047|2.7016|S|
Montargis|France|Centre-Val de Loire|47.9970|2.7330|S|
Orléans|France|Centre-Val de Loire|47.9030|1.9093|M|Orleans
Sens|France|Bourgogne-Franche-Comté|48.1975|3.2830|S|
Troyes|France|Grand Est|48.2973|4.0744|S|
Auxerre|France|Bourgogne-Franche-Comté|47.7982|3.5674|S|
Avallon|France|Bourgogne-Franche-Comté|47.4900|3.9080|S|
Nevers|France|Bourgogne-Franche-Comté|46.9908|3.1590|S|
Dijon|France|Bourgogne-Franche-Comté|47.3220|5.0415|M|
Beaune|France|Bourgogne-Franche-Comté|47.0260|4.8400|S|
Chalon-sur-Saône|France|Bourgogne-Franche-Comté|46.7806|4.8539|S|Chalon sur Saone
Moulins|France|Auvergne-Rhône-Alpes|46.5660|3.3330|S|
Mâcon|France|Bourgogne-Franche-Comté|46.3069|4.8287|S|Macon
Bourg-en-Bresse|France|Auvergne-Rhône-Alpes|46.2052|5.2255|S|
Clermont-Ferrand|France|Auvergne-Rhône-Alpes|45.7772|3.0870|M|
Lyon|France|Auvergne-Rhône-Alpes|45.7640|4.8357|L|
Saint-Étienne|France|Auvergne-Rhône-Alpes|45.4397|4.3872|M|Saint Etienne
Vienne|France|Auvergne-Rhône-Alpes|45.5255|4.8745|S|
Chambéry|France|Auvergne-Rhône-Alpes|45.5646|5.9178|S|Chambery
Grenoble|France|Auvergne-Rhône-Alpes|45.1885|5.7245|M|
Bourg-d'Oisans|France|Auvergne-Rhône-Alpes|45.0550|6.0300|S|Le Bourg-d'Oisans
Briançon|France|Provence-Alpes-Côte d'Azur|44.8990|6.6430|S|Briancon
Valence|France|Auvergne-Rhône-Alpes|44.9334|4.8924|S|
Montélimar|France|Auvergne-Rhône-Alpes|44.5581|4.7509|S|Montelimar
Gap|France|Provence-Alpes-Côte d'Azur|44.5594|6.0786|S|
Sisteron|France|Provence-Alpes-Côte d'Azur|44.1953|5.9437|S|
Digne-les-Bains|France|Provence-Alpes-Côte d'Azur|44.0925|6.2356|S|Digne
Avignon|France|Provence-Alpes-Côte d'Azur|43.9493|4.8055|M|
Castellane|France|Provence-Alpes-Côte d'Azur|43.8466|6.5136|S|
Aix-en-Provence|France|Provence-Alpes-Côte d'Azur|43.5297|5.4474|M|Aix
Marseille|France|Provence-Alpes-Côte d'Azur|43.2965|5.3698|L|
Toulon|France|Provence-Alpes-Côte d'Azur|43.1242|5.9280|M|
Fréjus|France|Provence-Alpes-Côte d'Azur|43.4330|6.7370|S|Frejus
Grasse|France|Provence-Alpes-Côte d'Azur|43.6588|6.9239|S|
Cannes|France|Provence-Alpes-Côte d'Azur|43.5528|7.0174|S|
Antibes|France|Provence-Alpes-Côte d'Azur|43.5804|7.1251|S|
Nice|France|Provence-Alpes-Côte d'Azur|43.7102|7.2620|M|
Rome|Italy|RM|41.9028|12.4964|L|Roma
Osaka|Japan|Osaka|34.6937|135.5023|L|
Kobe|Japan|Hyogo|34.6901|135.1955|M|
Nara|Japan|Nara|34.6851|135.8048|S|
Kyoto|Japan|Kyoto|35.0116|135.7681|L|
Otsu|Japan|Shiga|35.0045|135.8686|S|
Tsuruga|Japan|Fukui|35.6452|136.0555|S|
Fukui|Japan|Fukui|36.0641|136.2196|S|
Kanazawa|Japan|Ishikawa|36.5613|136.6562|M|
Toyama|Japan|Toyama|36.6953|137.2113|M|
Itoigawa|Japan|Niigata|37.0390|137.8628|S|
Joetsu|Japan|Niigata|37.1479|138.2360|S|
Gifu|Japan|Gifu|35.4233|136.7607|S|
Takayama|Japan|Gifu|36.1461|137.2522|S|
Nagoya|Japan|Aichi|35.1815|136.9066|L|
Toyohashi|Japan|Aichi|34.7692|137.3915|S|
Hamamatsu|Japan|Shizuoka|34.7108|137.7261|M|
Shizuoka|Japan|Shizuoka|34.9756|138.3828|M|
Fuji|Japan|Shizuoka|35.1614|138.6761|S|
Matsumoto|Japan|Nagano|36.2381|137.9720|S|
Nagano|Japan|Nagano|36.6486|138.1948|M|
Karuizawa|Japan|Nagano|36.3484|138.5966|S|
Kofu|Japan|Yamanashi|35.6623|138.5683|S|
Takasaki|Japan|Gunma|36.3219|139.0032|S|
Hakone|Japan|Kanagawa|35.2324|139.1069|S|
Odawara|Japan|Kanagawa|35.2646|139.1522|S|
Yokohama|Japan|Kanagawa|35.4437|139.6380|L|
Tokyo|Japan|Tokyo|35.6762|139.6503|L|
Sydney|Australia|NSW|-33.8688|151.2093|L|
Cessnock|Australia|NSW|-32.8340|151.3560|S|
Newcastle|Australia|NSW|-32.9283|151.7817|M|
Maitland|Australia|NSW|-32.7316|151.5525|S|
Singleton|Australia|NSW|-32.5697|151.1694|S|
Muswellbrook|Australia|NSW|-32.2654|150.8885|S|
Scone|Australia|NSW|-32.0500|150.8690|S|
Gloucester|Australia|NSW|-32.0080|151.9590|S|
Dungog|Australia|NSW|-32.4020|151.7580|S|
Nowendoc|Australia|NSW|-31.5170|151.7150|S|
Wauchope|Australia|NSW|-31.4580|152.7300|S|
Forster|Australia|NSW|-32.1810|152.5170|S|
Taree|Australia|NSW|-31.9000|152.4600|S|
Port Macquarie|Australia|NSW|-31.4333|152.9000|S|
Kempsey|Australia|NSW|-31.0790|152.8420|S|
Tamworth|Australia|NSW|-31.0927|150.9320|S|
Walcha|Australia|NSW|-30.9810|151.5920|S|
Uralla|Australia|NSW|-30.6420|151.5010|S|
Armidale|Australia|NSW|-30.5120|151.6650|S|
Dorrigo|Australia|NSW|-30.3410|152.7140|S|
Guyra|Australia|NSW|-30.2170|151.6710|S|
Coffs Harbour|Australia|NSW|-30.2963|153.1135|S|
Glen Innes|Australia|NSW|-29.7350|151.7380|S|
Grafton|Australia|NSW|-29.6910|152.9330|S|
Tenterfield|Australia|NSW|-29.0490|152.0190|S|
Drake|Australia|NSW|-28.9300|152.3700|S|
Tabulam|Australia|NSW|-28.8880|152.5680|S|
Casino|Australia|NSW|-28.8650|153.0480|S|
Lismore|Australia|NSW|-28.8133|153.2750|S|
Ballina|Australia|NSW|-28.8640|153.5650|S|
Kyogle|Australia|NSW|-28.6210|152.9990|S|
Byron Bay|Australia|NSW|-28.6474|153.6020|S|
Stanthorpe|Australia|QLD|-28.6560|151.9340|S|
Warwick|Australia|QLD|-28.2150|152.0340|S|
Tweed Heads|Australia|NSW|-28.1760|153.5410|S|
Gold Coast|Australia|QLD|-28.0167|153.4000|M|
Beaudesert|Australia|QLD|-27.9880|152.9960|S|
Ipswich|Australia|QLD|-27.6140|152.7600|S|
Toowoomba|Australia|QLD|-27.5600|151.9540|S|
Brisbane|Australia|QLD|-27.4698|153.0251|L|
Dalby|Australia|QLD|-27.1810|151.2660|S|
Caboolture|Australia|QLD|-27.0850|152.9510|S|
Caloundra|Australia|QLD|-26.8040|153.1290|S|
Maroochydore|Australia|QLD|-26.6560|153.0900|S|Sunshine Coast
Nambour|Australia|QLD|-26.6260|152.9590|S|
Kingaroy|Australia|QLD|-26.5400|151.8380|S|
Noosa Heads|Australia|QLD|-26.3940|153.0900|S|Noosa
Murgon|Australia|QLD|-26.2420|151.9410|S|
Gympie|Australia|QLD|-26.1900|152.6650|S|
Gayndah|Australia|QLD|-25.6250|151.6110|S|
Mundubbera|Australia|QLD|-25.5910|151.3010|S|
Maryborough|Australia|QLD|-25.5400|152.7010|S|
Eidsvold|Australia|QLD|-25.3710|151.1230|S|
Hervey Bay|Australia|QLD|-25.2880|152.8300|S|
Childers|Australia|QLD|-25.2360|152.2790|S|
Gin Gin|Australia|QLD|-24.9920|151.9530|S|
Bundaberg|Australia|QLD|-24.8660|152.3480|S|
Monto|Australia|QLD|-24.8640|151.1220|S|
Biloela|Australia|QLD|-24.3960|150.5150|S|
Miriam Vale|Australia|QLD|-24.3280|151.5610|S|
Agnes Water|Australia|QLD|-24.2120|151.9030|S|
Calliope|Australia|QLD|-24.0040|151.2030|S|
Gladstone|Australia|QLD|-23.8430|151.2680|S|
Mount Morgan|Australia|QLD|-23.6450|150.3890|S|
Rockhampton|Australia|QLD|-23.3780|150.5100|S|Rockhampton City
Yeppoon|Australia|QLD|-23.1280|150.7440|S|
Flagstaff|United States|AZ|35.1983|-111.6513|S|
Williams|United States|AZ|35.2495|-112.1910|S|
Tusayan|United States|AZ|35.9736|-112.1266|S|Grand Canyon
Cameron|United States|AZ|35.8758|-111.4135|S|
Tuba City|United States|AZ|36.1350|-111.2399|S|
Jacob Lake|United States|AZ|36.7119|-112.2260|S|
Page|United States|AZ|36.9147|-111.4558|S|
Kayenta|United States|AZ|36.7275|-110.2546|S|
Chinle|United States|AZ|36.1544|-109.5526|S|
Kanab|United States|UT|37.0475|-112.5263|S|
Escalante|United States|UT|37.7703|-111.6018|S|
Torrey|United States|UT|38.2997|-111.4199|S|
Hanksville|United States|UT|38.3733|-110.7135|S|
Green River|United States|UT|38.9950|-110.1596|S|
Mexican Hat|United States|UT|37.1497|-109.8565|S|
Bluff|United States|UT|37.2847|-109.5526|S|
Blanding|United States|UT|37.6242|-109.4787|S|
Monticello|United States|UT|37.8714|-109.3426|S|
Moab|United States|UT|38.5733|-109.5498|S|
Shiprock|United States|NM|36.7856|-108.6870|S|
Farmington|United States|NM|36.7281|-108.2187|S|
Cortez|United States|CO|37.3489|-108.5859|S|
Dolores|United States|CO|37.4739|-108.5043|S|
Durango|United States|CO|37.2753|-107.8801|S|
Pagosa Springs|United States|CO|37.2694|-107.0098|S|
Telluride|United States|CO|37.9375|-107.8123|S|
Naturita|United States|CO|38.2186|-108.5676|S|
Ridgway|United States|CO|38.1528|-107.7562|S|
Ouray|United States|CO|38.0228|-107.6714|S|
Montrose|United States|CO|38.4783|-107.8762|S|
Gunnison|United States|CO|38.5458|-106.9253|S|
Salida|United States|CO|38.5347|-105.9989|S|
Delta|United States|CO|38.7422|-108.0690|S|
Paonia|United States|CO|38.8683|-107.5920|S|
Crested Butte|United States|CO|38.8697|-106.9878|S|
Grand Junction|United States|CO|39.0639|-108.5506|S|
Aspen|United States|CO|39.1911|-106.8175|S|
Leadville|United States|CO|39.2508|-106.2925|S|
Carbondale|United States|CO|39.4022|-107.2112|S|
Rifle|United States|CO|39.5347|-107.7831|S|
Glenwood Springs|United States|CO|39.5505|-107.3248|S|
Frisco|United States|CO|39.5744|-106.0975|S|
Vail|United States|CO|39.6403|-106.3742|S|
Silverthorne|United States|CO|39.6296|-106.0717|S|
Meeker|United States|CO|40.0375|-107.9131|S|
Kremmling|United States|CO|40.0589|-106.3887|S|
Granby|United States|CO|40.0861|-105.9395|S|
Grand Lake|United States|CO|40.2522|-105.8230|S|
Boulder|United States|CO|40.0150|-105.2705|S|
Lyons|United States|CO|40.2247|-105.2714|S|
Estes Park|United States|CO|40.3772|-105.5217|S|
Loveland|United States|CO|40.3978|-105.0750|S|
Denver|United States|CO|39.7392|-104.9903|L|
New York|United States|NY|40.7128|-74.0060|L|New York City;NYC;Manhattan;Long Island City
Newark|United States|NJ|40.7357|-74.1724|M|
Trenton|United States|NJ|40.2206|-74.7597|S|
Philadelphia|United States|PA|39.9526|-75.1652|L|Philly
Allentown|United States|PA|40.6084|-75.4902|S|
Harrisburg|United States|PA|40.2732|-76.8867|S|
Scranton|United States|PA|41.4090|-75.6624|S|
Pittsburgh|United States|PA|40.4406|-79.9959|M|
Erie|United States|PA|42.1292|-80.0851|S|
Albany|United States|NY|42.6526|-73.7562|S|
Syracuse|United States|NY|43.0481|-76.1474|S|
Rochester|United States|NY|43.1566|-77.6088|M|
Buffalo|United States|NY|42.8864|-78.8784|M|
Cleveland|United States|OH|41.4993|-81.6944|M|
Detroit|United States|MI|42.3314|-83.0458|L|
Chicago|United States|IL|41.8781|-87.6298|L|
Toronto|Canada|ON|43.6532|-79.3832|L|
Hamilton|Canada|ON|43.2557|-79.8711|M|
Brantford|Canada|ON|43.1394|-80.2644|S|
Cambridge|Canada|ON|43.3616|-80.3144|S|
Kitchener|Canada|ON|43.4516|-80.4925|M|Waterloo
Guelph|Canada|ON|43.5448|-80.2482|S|
Stratford|Canada|ON|43.3700|-80.9822|S|
Woodstock|Canada|ON|43.1306|-80.7467|S|
London|Canada|ON|42.9849|-81.2453|M|
Kingston|Canada|ON|44.2312|-76.4860|S|
Ottawa|Canada|ON|45.4215|-75.6972|M|
Barrie|Canada|ON|44.3894|-79.6903|S|
Orillia|Canada|ON|44.6082|-79.4197|S|
Collingwood|Canada|ON|44.5008|-80.2169|S|
Owen Sound|Canada|ON|44.5690|-80.9406|S|
Midland|Canada|ON|44.7501|-79.8921|S|
Bracebridge|Canada|ON|45.0417|-79.3096|S|
Huntsville|Canada|ON|45.3269|-79.2168|S|
Parry Sound|Canada|ON|45.3474|-80.0353|S|
Tobermory|Canada|ON|45.2533|-81.6645|S|
Killarney|Canada|ON|45.9700|-81.5130|S|
North Bay|Canada|ON|46.3091|-79.4608|S|
Espanola|Canada|ON|46.2580|-81.7670|S|
Sudbury|Canada|ON|46.4917|-80.9930|M|Greater Sudbury
Sault Ste. Marie|Canada|ON|46.5219|-84.3461|S|
Dubai|United Arab Emirates|Dubai|25.2048|55.2708|L|
Sharjah|United Arab Emirates|Sharjah|25.3463|55.4209|M|
Jebel Ali|United Arab Emirates|Dubai|25.0119|55.1250|S|
Ghantoot|United Arab Emirates|Abu Dhabi|24.8600|54.8500|S|
Al Rahba|United Arab Emirates|Abu Dhabi|24.6180|54.7000|S|
Abu Dhabi|United Arab Emirates|Abu Dhabi|24.4539|54.3773|L|
Al Ain|United Arab Emirates|Abu Dhabi|24.2075|55.7447|M|
"""

LANDMARKS = """
Merlion Park|Merlion|1 Fullerton Rd|Singapore|1.2868|103.8545|tourist_attraction;park
Marina Bay Sands|MBS|10 Bayfront Ave|Singapore|1.2834|103.8607|hotel;lodging;tourist_attraction
Raffles Hotel|Raffles Hotel Singapore|1 Beach Rd|Singapore|1.2949|103.8545|hotel;lodging
Kallang MRT Station|Kallang Station|5 Sims Ave|Singapore|1.3114|103.8714|subway_station;transit_station
Queenstown MRT Station|Queenstown Station|301 Commonwealth Ave|Singapore|1.2946|103.8060|subway_station;transit_station
Kent Ridge Hill Residences||50A South Buona Vista Rd|Singapore|1.2915|103.7860|premise
Symphony Suites|Symphony Suites Yishun|23 Yishun Cl|Singapore|1.4285|103.8370|premise
Park Rosewood Suites||69 Rosewood Dr|Singapore|1.4425|103.7800|premise
J Gateway Condo|J Gateway|2 Gateway Dr|Singapore|1.3340|103.7425|premise
Park Place Residences at PLQ|Park Place Residences;PLQ|2 Paya Lebar Rd|Singapore|1.3170|103.8930|premise
Petronas Twin Towers|Petronas Towers;Petronas Twin Tower;KLCC|Kuala Lumpur City Centre|Kuala Lumpur|3.1579|101.7116|tourist_attraction
Sydney Opera House|Opera House|Bennelong Point|Sydney|-33.8568|151.2153|tourist_attraction
Sydney Harbour Bridge|Harbour Bridge|Bradfield Hwy|Sydney|-33.8523|151.2108|tourist_attraction
Holiday Inn Express & Suites Sunshine Coast|Holiday Inn Express Sunshine Coast|42 First Avenue|Maroochydore|-26.6560|153.0930|hotel;lodging
Rockhampton Palms Motor Inn|Rockhampton Palms|55 George St|Rockhampton|-23.3830|150.5100|hotel;lodging
Eiffel Tower|Tour Eiffel|Av. Gustave Eiffel|Paris|48.8584|2.2945|tourist_attraction
Arc de Triomphe||Pl. Charles de Gaulle|Paris|48.8738|2.2950|tourist_attraction
Louvre Museum|Musée du Louvre;Louvre|Rue de Rivoli|Paris|48.8606|2.3376|museum;tourist_attraction
Charles de Gaulle Airport|CDG;CDG Airport;Paris Charles de Gaulle Airport|95700 Roissy-en-France|Roissy-en-France|49.0097|2.5479|airport
Chemin de Fer de Provence|Gare des Chemins de Fer de Provence|4bis Rue Alfred Binet|Nice|43.7067|7.2626|train_station;transit_station
Villa Borghese|Borghese Gardens|00197 Rome|Rome|41.9142|12.4923|park;tourist_attraction
Colosseum|Colosseo|Piazza del Colosseo|Rome|41.8902|12.4922|tourist_attraction
Disneyland Park|Disneyland|Anaheim, CA 92802|Anaheim|33.8121|-117.9190|amusement_park;tourist_attraction
Yosemite Valley Visitor Center|Yosemite Visitor Center|9035 Village Dr|Yosemite Valley|37.7485|-119.5870|tourist_attraction
Residence Inn by Marriott San Jose North/Silicon Valley|Residence Inn San Jose North|656 America Center Ct|San Jose|37.4146|-121.9517|hotel;lodging
Grand Canyon Plaza Hotel||406 Canyon Plaza Ln|Tusayan|35.9733|-112.1265|hotel;lodging
Elk Meadow Lodge and RV Resort|Elk Meadow Lodge|1665 CO-66|Estes Park|40.3713|-105.5602|hotel;lodging;campground
Empire State Building||20 W 34th St|New York|40.7484|-73.9857|tourist_attraction
Queensbridge Park||Vernon Blvd|New York|40.7563|-73.9477|park
NewYork-Presbyterian/Weill Cornell Medical Center|Weill Cornell Medical Center|525 E 68th St|New York|40.7644|-73.9545|hospital
Willis Tower|Sears Tower|233 S Wacker Dr|Chicago|41.8789|-87.6359|tourist_attraction
Holiday Inn Express Philadelphia - Penns Landing by IHG|Holiday Inn Express Philadelphia Penns Landing|100 N Christopher Columbus Blvd|Philadelphia|39.9530|-75.1410|hotel;lodging
Sheraton Jumeirah Beach Resort|Sheraton Jumeirah Beach|Al Mamsha St|Dubai|25.0740|55.1300|hotel;lodging
Signature 1 Hotel Barsha Heights|Signature 1 Hotel|Al Thanayah Fourth|Dubai|25.0990|55.1770|hotel;lodging
Burj Khalifa||1 Sheikh Mohammed bin Rashid Blvd|Dubai|25.1972|55.2744|tourist_attraction
Oryx Hotel|Oryx Hotel Abu Dhabi|Zayed the First Street|Abu Dhabi|24.4700|54.3500|hotel;lodging
Royal M Hotel by Gewan Abu Dhabi|Royal M Hotel|Al Bateen Marina|Abu Dhabi|24.4530|54.3370|hotel;lodging
Tokyo Tower||4 Chome-2-8 Shibakoen|Tokyo|35.6586|139.7454|tourist_attraction
Shibuya Station||2 Chome Dogenzaka|Tokyo|35.6580|139.7016|train_station;transit_station
Osaka Castle||1-1 Osakajo|Osaka|34.6873|135.5262|tourist_attraction
Space Needle||400 Broad St|Seattle|47.6205|-122.3493|tourist_attraction
Pike Place Market||85 Pike St|Seattle|47.6097|-122.3422|tourist_attraction
Golden Gate Bridge||Golden Gate Brg|San Francisco|37.8199|-122.4783|tourist_attraction
Union Square San Francisco|Union Square|333 Post St|San Francisco|37.7880|-122.4075|park
Griffith Observatory||2800 E Observatory Rd|Los Angeles|34.1184|-118.3004|tourist_attraction
Union Station Los Angeles|LA Union Station|800 N Alameda St|Los Angeles|34.0562|-118.2365|train_station
Vieux Port de Marseille|Old Port of Marseille|Quai du Port|Marseille|43.2951|5.3740|tourist_attraction
Place Bellecour||Place Bellecour|Lyon|45.7578|4.8320|park
"""
